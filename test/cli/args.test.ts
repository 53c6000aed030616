import { describe, expect, it } from "vitest";
import { split, toolArguments, UsageError, type JsonSchema } from "../../src/cli/args";
import { bareFlagsOf } from "../../src/cli/tool-command";

// The shape zod's JSON Schema gives a tool's input (optional fields, defaults, arrays, enums).
const schema: JsonSchema = {
  type: "object",
  required: ["entity_path", "change_type"],
  properties: {
    entity_path: { type: "string" },
    change_type: { type: "string", enum: ["add", "modify"] },
    limit: { type: "integer", default: 20 },
    ratio: { type: "number" },
    stats: { type: "boolean", default: false },
    paths: { type: "array", items: { type: "string" } },
    filter: { type: "object" },
    since: { anyOf: [{ type: "string" }, { type: "null" }] },
  },
};

const parse = (argv: string[], stdin?: string) => toolArguments(schema, split(argv, bareFlagsOf(schema)), stdin);

describe("command-line arguments from a tool's schema", () => {
  it("reads flags in either spelling, typed by the schema", () => {
    expect(parse(["--entity-path", "users.email", "--change_type=add", "--limit", "5", "--ratio", "0.5", "--stats", "--since", "7d"])).toEqual({
      entity_path: "users.email",
      change_type: "add",
      limit: 5,
      ratio: 0.5,
      stats: true,
      since: "7d",
    });
  });

  it("fills required parameters from positionals, in order", () => {
    expect(parse(["users.email", "modify"])).toEqual({ entity_path: "users.email", change_type: "modify" });
    expect(parse(["--change-type", "add", "users.email"])).toEqual({ entity_path: "users.email", change_type: "add" });
  });

  it("a boolean flag never swallows the next word; --no-x sets false", () => {
    expect(parse(["--stats", "users.email", "add"])).toEqual({ stats: true, entity_path: "users.email", change_type: "add" });
    expect(parse(["--no-stats", "a", "add"])).toMatchObject({ stats: false });
    expect(parse(["--stats=false", "a", "add"])).toMatchObject({ stats: false });
  });

  it("arrays by repeating the flag or as JSON; objects as JSON", () => {
    expect(parse(["a", "add", "--paths", "src/a.ts", "--paths", "src/b.ts"])).toMatchObject({ paths: ["src/a.ts", "src/b.ts"] });
    expect(parse(["a", "add", "--paths", '["x","y"]'])).toMatchObject({ paths: ["x", "y"] });
    expect(parse(["a", "add", "--filter", '{"k":1}'])).toMatchObject({ filter: { k: 1 } });
  });

  it("--args gives a base that flags override, from text or stdin", () => {
    expect(parse(["--args", '{"entity_path":"x","change_type":"add","limit":3}', "--limit", "9"])).toEqual({ entity_path: "x", change_type: "add", limit: 9 });
    expect(parse(["--args", "-"], '{"entity_path":"y","change_type":"modify"}')).toEqual({ entity_path: "y", change_type: "modify" });
  });

  it("refuses what it cannot read, naming the flag and the way out", () => {
    const refused = (argv: string[]) => {
      try {
        parse(argv);
      } catch (err) {
        expect(err).toBeInstanceOf(UsageError);
        return err as UsageError;
      }
      throw new Error(`accepted ${argv.join(" ")}`);
    };
    expect(refused(["a", "add", "--limit", "many"]).message).toContain("--limit takes a whole number");
    expect(refused(["a", "add", "--limit", "1.5"]).message).toContain("whole number");
    expect(refused(["a", "add", "--bogus", "1"]).hint).toContain("--entity-path");
    expect(refused(["a", "add", "--filter", "{nope"]).message).toContain("JSON");
    expect(refused(["a", "add", "extra"]).message).toContain("Unexpected argument 'extra'");
    expect(refused(["a", "add", "--stats=maybe"]).message).toContain("yes/no");
    expect(refused(["a", "add", "--no-limit"]).message).toContain("not a yes/no flag");
    expect(refused(["--args", "[1]"]).message).toContain("JSON object");
  });

  it("a tool with no required parameter takes one positional for its first string parameter", () => {
    const s: JsonSchema = { type: "object", properties: { entity_path: { type: "string" }, limit: { type: "integer" } } };
    expect(toolArguments(s, split(["users.email"]))).toEqual({ entity_path: "users.email" });
  });

  it("-- ends the flags: a value that looks like a flag passes through", () => {
    expect(parse(["--", "--weird", "add"])).toEqual({ entity_path: "--weird", change_type: "add" });
  });
});
