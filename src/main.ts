// Composition root: start the memory worker and give its proxy to the app element.
import { whenAppMayStart } from './pwa';
import { startMemoryWorker } from './worker-client';
import './ui/sm-app';

// The page has no stylesheet of its own (CSP style-src 'self', Lit styles live in shadow roots).
document.body.style.margin = '0';

const app =
  document.querySelector('sm-app') ?? document.body.appendChild(document.createElement('sm-app'));
// On a first visit, once the service worker is in control, so the model and the ONNX runtime
// are fetched once, through its cache (docs/hosting.md).
void whenAppMayStart().then(() => {
  const { memory } = startMemoryWorker({
    onError: (message) => {
      app.workerError = message;
    },
  });
  app.memory = memory;
});
