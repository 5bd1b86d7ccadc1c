// Cross-origin isolation: the two headers that make a page `crossOriginIsolated` (so the ONNX
// runtime may use threads), shared by the dev/preview servers (vite.config.ts) and the service
// worker (workers/sw.ts), which adds them where the host cannot (docs/hosting.md).

/**
 * COEP `require-corp` still lets the page make CORS-mode fetches to the user's LLM server and the
 * model hub; every file of the app is same-origin.
 */
export const ISOLATION_HEADERS = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
} as const;
