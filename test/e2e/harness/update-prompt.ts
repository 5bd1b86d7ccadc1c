// Preview harness for <sm-update-prompt>: shown as if a new version waited (no service worker
// is registered here: `no-register`). "Toggle" hides and shows it; events are listed.
import '../../../src/ui/sm-update-prompt';

const sheet = new CSSStyleSheet();
sheet.replaceSync(`
  html, body { margin: 0; height: 100%; }
  body { background: #f6f7f9; font: 15px/1.4 system-ui, sans-serif; color: #1d2430; }
  #page { padding: 16px 20px; }
  #events { font: 12px monospace; color: #5d6877; }
`);
document.adoptedStyleSheets = [sheet];

const prompt = document.querySelector('sm-update-prompt');
const log = document.querySelector('#events');
document.querySelector('#toggle')?.addEventListener('click', () => {
  if (prompt) prompt.available = !prompt.available;
});
document.addEventListener('sm-notice', (event) => {
  if (log) log.textContent += `sm-notice ${JSON.stringify(event.detail)}\n`;
});
