// Model output as safe HTML: markdown through `marked`, then DOMPurify with a short allow-list.
// Raw HTML in the text is shown as text (never parsed), images become links (no remote loads),
// and every link opens in a new tab without an opener or referrer. This module is the one source
// of HTML in the UI; its output is the only string a template may pass to `unsafeHTML`.
import createDOMPurify from 'dompurify';
import type { DOMPurify } from 'dompurify';
import { Marked, type Tokens } from 'marked';

/** Tags markdown can produce that are worth keeping; anything else is dropped. */
export const ALLOWED_TAGS = [
  'a',
  'blockquote',
  'br',
  'code',
  'del',
  'em',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'hr',
  'li',
  'ol',
  'p',
  'pre',
  'strong',
  'table',
  'tbody',
  'td',
  'th',
  'thead',
  'tr',
  'ul',
];

const ALLOWED_ATTR = ['href', 'title', 'start', 'align'];

/** A link may only go to the web or an email address (no `javascript:`, `data:`, relative URLs). */
const ALLOWED_URI_REGEXP = /^(?:https?:|mailto:)/i;

const escapeHtml = (text: string): string =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );

const markdown = new Marked({
  gfm: true,
  // Chat models use single newlines as line breaks.
  breaks: true,
  renderer: {
    // Raw HTML is data: show it as the model wrote it.
    html({ text }: Tokens.HTML | Tokens.Tag): string {
      return escapeHtml(text);
    },
    // No remote image loads (privacy, CSP): a link to the image instead.
    image({ href, title, text }: Tokens.Image): string {
      const label = escapeHtml(text || href);
      const tip = title ? ` title="${escapeHtml(title)}"` : '';
      return `<a href="${escapeHtml(href)}"${tip}>${label}</a>`;
    },
    // Task lists as plain text marks rather than form controls.
    checkbox({ checked }: Tokens.Checkbox): string {
      return checked ? '☑ ' : '☐ ';
    },
  },
});

/** DOMPurify needs a DOM; made once, on first use, with its own hooks (the shared instance stays untouched). */
const purifier = (() => {
  let instance: DOMPurify | null | undefined;
  return (): DOMPurify | null => {
    if (instance !== undefined) return instance;
    const made = typeof window === 'undefined' ? null : createDOMPurify(window);
    instance = made?.isSupported ? made : null;
    instance?.addHook('afterSanitizeAttributes', (node) => {
      if (node.nodeName === 'A') {
        node.setAttribute('target', '_blank');
        node.setAttribute('rel', 'noopener noreferrer');
      }
    });
    return instance;
  };
})();

/**
 * Markdown → sanitised HTML (a string for Lit's `unsafeHTML`). Without a DOM to sanitise with
 * (Node), it fails closed: the text comes back escaped, in one paragraph.
 */
export function renderMarkdown(text: string): string {
  const purify = purifier();
  if (!purify) return `<p>${escapeHtml(text)}</p>`;
  const html = markdown.parse(text, { async: false });
  return purify.sanitize(html, {
    ALLOWED_TAGS,
    ALLOWED_ATTR,
    ALLOWED_URI_REGEXP,
    ALLOW_DATA_ATTR: false,
    ALLOW_ARIA_ATTR: false,
    RETURN_TRUSTED_TYPE: false,
  });
}
