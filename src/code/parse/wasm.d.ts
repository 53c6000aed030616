// wrangler (and @cloudflare/vitest-plugin in tests) turn a `.wasm` import into a WebAssembly.Module
// compiled when the Worker is deployed; see runtime.ts for why that is the only way wasm runs here.
declare module "*.wasm" {
  const module: WebAssembly.Module;
  export default module;
}
