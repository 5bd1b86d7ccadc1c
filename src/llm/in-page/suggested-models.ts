// Small instruct models that suit the model in this browser, offered as links in Settings: the
// person picks one and downloads it (nothing is fetched until then). Sizes are the files' (Q4_K_M
// quantization); memory and speed are rough expectations for a recent laptop, not measurements
// made here. docs/in-page-model.md, "What fits, and how fast".

export interface SuggestedModel {
  name: string;
  /** The file's download link (Hugging Face, `…/resolve/main/<file>.gguf`). */
  url: string;
  /** The file's size, as shown. */
  size: string;
  /** About how much memory it takes to run, with a few thousand tokens of context. */
  memory: string;
  /** Rough tokens per second on a laptop's CPU, several threads. */
  speed: string;
}

export const SUGGESTED_MODELS: readonly SuggestedModel[] = [
  {
    name: 'Qwen2.5 0.5B Instruct',
    url: 'https://huggingface.co/Qwen/Qwen2.5-0.5B-Instruct-GGUF/resolve/main/qwen2.5-0.5b-instruct-q4_k_m.gguf',
    size: '0.5 GB',
    memory: '0.7 GB',
    speed: '20–40 tokens/s',
  },
  {
    name: 'Llama 3.2 1B Instruct',
    url: 'https://huggingface.co/bartowski/Llama-3.2-1B-Instruct-GGUF/resolve/main/Llama-3.2-1B-Instruct-Q4_K_M.gguf',
    size: '0.8 GB',
    memory: '1.1 GB',
    speed: '10–20 tokens/s',
  },
  {
    name: 'Qwen2.5 1.5B Instruct',
    url: 'https://huggingface.co/Qwen/Qwen2.5-1.5B-Instruct-GGUF/resolve/main/qwen2.5-1.5b-instruct-q4_k_m.gguf',
    size: '1.1 GB',
    memory: '1.5 GB',
    speed: '6–12 tokens/s',
  },
  {
    name: 'Llama 3.2 3B Instruct',
    url: 'https://huggingface.co/bartowski/Llama-3.2-3B-Instruct-GGUF/resolve/main/Llama-3.2-3B-Instruct-Q4_K_M.gguf',
    size: '2.0 GB',
    memory: '2.6 GB',
    speed: '3–6 tokens/s',
  },
];
