/** jsdom ships no types and @types/jsdom is not a dependency: the part of it the end-to-end tests use. */
declare module "jsdom" {
  export class JSDOM {
    constructor(html?: string);
    readonly window: { readonly document: object } & Record<string, unknown>;
  }
}
