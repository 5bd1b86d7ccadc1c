// renderMarkdown without a DOM (Node): DOMPurify cannot run here, so it must fail closed and
// return the text escaped, never unsanitised HTML. The sanitiser itself is tested in Chromium
// (test/e2e/markdown-render.test.ts).
import { describe, expect, it } from 'vitest';
import { renderMarkdown } from '../../src/ui/markdown';

describe('renderMarkdown without a DOM', () => {
  it('returns the text escaped, in one paragraph', () => {
    expect(renderMarkdown('<img src=x onerror=alert(1)> **bold** & "quotes"')).toBe(
      '<p>&lt;img src=x onerror=alert(1)&gt; **bold** &amp; &quot;quotes&quot;</p>',
    );
  });

  it('never emits a tag the text did not escape', () => {
    const out = renderMarkdown('<script>alert(1)</script>[x](javascript:alert(1))');
    expect(out.slice(3, -4)).not.toMatch(/[<>]/);
  });
});
