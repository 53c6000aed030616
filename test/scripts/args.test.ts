/** The operator scripts take ids as the server lists them, including the provider's ids that begin with '-'. */
import { expect, it } from "vitest";
import { parseCommand } from "../../scripts/args";

const options = { tenant: { type: "string" }, grant: { type: "string" }, quiet: { type: "boolean", default: false } } as const;

it("a string option takes a value that begins with a single dash", () => {
  const { positionals, values } = parseCommand(["revoke", "--tenant", "acme", "--grant", "-Ab3xYz_0-k9LmN2q", "--quiet"], options);
  expect(positionals).toEqual(["revoke"]);
  expect(values).toEqual({ tenant: "acme", grant: "-Ab3xYz_0-k9LmN2q", quiet: true });
});

it("an option word is never taken as a value, and unknown options are still refused", () => {
  expect(() => parseCommand(["revoke", "--grant", "--quiet"], options)).toThrow(/ambiguous|argument missing/);
  expect(() => parseCommand(["revoke", "--grnt", "-x"], options)).toThrow(/Unknown option/);
  expect(parseCommand(["revoke", "--grant=-already-joined"], options).values.grant).toBe("-already-joined");
});
