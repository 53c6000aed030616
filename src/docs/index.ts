/** The document store's tool lists, for the catalog (src/server/registry.ts). */
export { docsTools } from "./composite";
