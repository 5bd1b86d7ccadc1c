// The one ranking function of every search (docs/search.md): lexical and semantic relevance
// fused into one calibrated relevance in [0, 1], an entry's context snapshot adding evidence
// below its own text, then the blend the tools promise:
//   score = (1 − recencyBias) × relevance + recencyBias × exp(−age days / 30).
import type { ModelInfo } from '../embeddings/types';
import { blend, recency } from './scoring';

/**
 * Share of the lexical signal in the fused relevance (the semantic signal has the rest).
 * Chosen on the LoCoMo dev conversations (bench/README.md, "Recall"); the one fusion weight.
 */
export const LEXICAL_WEIGHT = 0.7;
/**
 * How much an entry's context snapshot can add, relative to its own path and content: the
 * snapshot fills at most this share of the room the entry's own match leaves. Below 1, so a
 * turn's words in another entry's snapshot never outrank the entry that holds them.
 */
export const SNAPSHOT_WEIGHT = 0.35;

/**
 * How much a chat sitting as a whole (its sentences' words as one text, its best sentence's
 * meaning) adds to each of its sentences, per signal, within the room the sentence's own match
 * (with its turn) leaves, when a search spans several sittings: half, weaker than the sentence's
 * own text. Floors apply to the sentence's own match, so a sitting's other topics never ride
 * along (docs/search.md, "Relevance through the hierarchy"). 0.25, 0.5, 0.75 and 1 were measured
 * on the LoCoMo dev conversations (a chat a session); 0.5 gave the best episodic recall, its
 * neighbours within 0.02.
 */
export const CHAT_WEIGHT = 0.5;
/**
 * A chat's sitting (episode) ends at a pause longer than this between two of its turns: a
 * person's one long chat over weeks is many sittings, each evidence for its own turns as a chat
 * is when each sitting has a chat of its own. Thirty minutes: the inactivity that ends a session
 * in web analytics, by convention, not measured here (LoCoMo's sessions are hours to weeks
 * apart, so any pause from minutes to hours splits them the same).
 */
export const EPISODE_GAP_MS = 30 * 60_000;
/**
 * The same for a heading as a whole (every entry directly under it) and each of its entries,
 * when a search spans several headings. 0.25, 0.5 and 1 measured; 0.5 taken, as for chats.
 */
export const HEADING_WEIGHT = 0.5;

/**
 * The same for the turns just before and after a turn (the exchange it belongs to): words that
 * only they hold count for each of its sentences at this weight, below the turn's own words.
 * Half, as a chat's and a heading's. Measured on the LoCoMo dev conversations, episodic recall
 * R@10 (recallMemory / searchChunks): 0.35 (a snapshot's weight, used before) 0.698 / 0.712,
 * 0.5 0.706 / 0.717, 0.65 0.710 / 0.719, 0.8 0.717 / 0.722, 1 0.713 / 0.719. The dev optimum
 * (0.8) is 0.01 above the principled value, within what a tuned weight gains and loses on
 * unseen data, so the principled value stands.
 */
export const NEIGHBOUR_WEIGHT = 0.5;

/** The recency blend of queryMemoryHeading when the caller gives none. */
export const DEFAULT_RECENCY_BIAS = 0.3;
/**
 * From this match (fused relevance) on, a memory counts as relevant: auto-recall's floor, a
 * context snapshot's, the explorer's cut-off. An entry holding about a third of the query's
 * information (say its rarest word) passes; one sharing only a common word does not. The
 * highest floor, in steps of 0.05, at which auto-recall kept its recall@10 within 2 % on the
 * LoCoMo dev conversations (docs/search.md).
 */
export const MIN_RELEVANCE = 0.3;
/**
 * The same floor for a past turn in auto-recall and searchConversations, by the same rule (the
 * highest, in steps of 0.05, keeping recall@10 within 2 % of the unfiltered ranking), measured on
 * the episodic recall of the LoCoMo dev conversations: unfiltered 0.729, 0.2 0.727, 0.25 0.724,
 * 0.3 0.711; measured again once the floor weighed the words no chat holds (`floorMatch`): 0.2
 * 0.727, 0.25 0.717, 0.3 0.685. Lower than an entry's because a turn's words count once and its
 * chat's evidence, which lifts its place but not its floor, is often what places it
 * (docs/search.md).
 */
export const TURN_MIN_RELEVANCE = 0.25;

/**
 * The relevance the recency blend weighs: a search's match measured against its best match
 * (max-normalisation, as CombSUM fusion does), so the memory that answers the question counts
 * as fully relevant however many of the question's words it lacks. A best match weaker than
 * MIN_RELEVANCE is not inflated past `match / MIN_RELEVANCE`. A loose match (below
 * MIN_RELEVANCE: a common word, a vague likeness) is less surely relevant the further below
 * the floor it is, and its relevance fades with it (× match / MIN_RELEVANCE), so at the default
 * blend recency cannot lift it over the memories that answer the question. Increasing in the
 * match, so recencyBias 0 still orders by the match alone.
 */
export function relativeRelevance(match: number, best: number): number {
  const sure = match < MIN_RELEVANCE ? match / MIN_RELEVANCE : 1;
  const r = (match / Math.max(best, MIN_RELEVANCE)) * sure;
  return r >= 1 ? 1 : r > 0 ? r : 0;
}

/** Which signals a search uses: both (the default), or one alone (for measurement). */
export type Signals = 'both' | 'lexical' | 'semantic';

/**
 * Pseudo-count of the prior in the query's baseline cosine: with few memories the baseline is
 * the model's cosine of unrelated text; with many, the query's cosine with their centroid.
 */
export const BASELINE_PRIOR = 20;

/**
 * The cosine an unrelated memory would have with this query: the query's cosine with the
 * centroid of the memories searched (a sum of `count` unit vectors, given as `sumDot`, the
 * query · that sum), shrunk towards the model's unrelated level while the memories are few.
 * Text of one style (a long chat) raises every cosine alike; this baseline rises with it.
 */
export function baselineCosine(
  sumDot: number,
  count: number,
  model: Pick<ModelInfo, 'threshold' | 'calibration'>,
): number {
  const { unrelated } = calibrationOf(model);
  return (sumDot + BASELINE_PRIOR * unrelated) / (count + BASELINE_PRIOR);
}

function calibrationOf(model: Pick<ModelInfo, 'threshold' | 'calibration'>) {
  return (
    model.calibration ?? { unrelated: model.threshold - 0.25, related: model.threshold + 0.25 }
  );
}

/**
 * Cosine → semantic relevance in [0, 1]: 0 at the query's baseline (what an unrelated memory
 * scores), 1 once the cosine is above it by the model's gap between related and unrelated text
 * (measured per model on labelled pairs: src/embeddings/models.ts), linear between.
 */
export function semanticRelevance(
  cosine: number,
  model: Pick<ModelInfo, 'threshold' | 'calibration'>,
  baseline = calibrationOf(model).unrelated,
): number {
  if (!Number.isFinite(cosine)) return 0;
  const { unrelated, related } = calibrationOf(model);
  const r = (cosine - baseline) / (related - unrelated);
  return r <= 0 ? 0 : r >= 1 ? 1 : r;
}

/**
 * The match a sentence's floor (TURN_MIN_RELEVANCE; MIN_RELEVANCE in a snapshot) is held
 * against: the fused match with its lexical side weighed by the query's `coverage` (the share of
 * its information that some memory holds at all). While memory is small, most words of a
 * question about something never said are in no memory, and relevance, measured against the
 * words memory holds, would let the one common word left (a "go", a "friends") pass as a full
 * match. Ranking is unchanged (the factor is the same for every memory a query finds); the
 * semantic side is not weighed, so a question in other words still passes (docs/search.md,
 * "Words no memory holds").
 */
export function floorMatch(
  lexical: number,
  semantic: number,
  coverage: number,
  signals: Signals = 'both',
): number {
  return fuse(lexical * coverage, semantic, signals);
}

/** Own evidence, plus the context's within the room left: 1 − (1 − own)(1 − w · context). */
export function withContext(own: number, context: number, weight: number): number {
  return 1 - (1 - own) * (1 - weight * context);
}

/** An entry's own evidence with its snapshot's, at SNAPSHOT_WEIGHT. */
export function withSnapshot(own: number, snapshot: number): number {
  return withContext(own, snapshot, SNAPSHOT_WEIGHT);
}

/** Lexical and semantic relevance fused into one. */
export function fuse(lexical: number, semantic: number, signals: Signals = 'both'): number {
  if (signals === 'lexical') return lexical;
  if (signals === 'semantic') return semantic;
  return LEXICAL_WEIGHT * lexical + (1 - LEXICAL_WEIGHT) * semantic;
}

export interface Ranked {
  /** Fused relevance in [0, 1]. */
  relevance: number;
  /** exp(−age days / 30). */
  recency: number;
  /** (1 − bias) × relevance + bias × recency. */
  score: number;
}

/** The final score of a memory of relevance `relevance`, last changed at `modifiedMs`. */
export function rank(relevance: number, modifiedMs: number, nowMs: number, bias: number): Ranked {
  const rec = recency(modifiedMs, nowMs);
  return { relevance, recency: rec, score: blend(relevance, rec, bias) };
}
