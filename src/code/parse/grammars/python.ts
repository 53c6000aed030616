/** Python: functions, classes and module-level names; `import` and `from … import`. */
import type { Node } from "web-tree-sitter";
import { type Container, type Definition, type LanguageSpec, definition, firstLine } from "../spec";
import type { ImportRef } from "../types";

/**
 * Python's convention for what a module exports: no leading underscore. Dunder methods
 * (`__init__`) are the class's public protocol, so a member is private only by a single-underscore
 * name that is not a dunder.
 */
function isPublic(name: string, container: Container): boolean {
  if (container.level === "module") return !name.startsWith("_");
  return container.exported && (!name.startsWith("_") || (name.startsWith("__") && name.endsWith("__")));
}

function definitions(node: Node, container: Container): Definition[] {
  if (node.type === "decorated_definition") {
    const inner = node.childForFieldName("definition");
    return inner ? definitionsOf(inner, node, container) : [];
  }
  return definitionsOf(node, node, container);
}

function definitionsOf(decl: Node, outer: Node, container: Container): Definition[] {
  const nameNode = decl.childForFieldName("name");
  const name = nameNode?.text ?? "";
  const common = { declaration: decl, exported: isPublic(name, container) };
  switch (decl.type) {
    case "function_definition":
      return [definition(outer, nameNode, { ...common, kind: container.level === "class" ? "method" : "function", body: decl.childForFieldName("body") })];
    case "class_definition": {
      const body = decl.childForFieldName("body");
      return [definition(outer, nameNode, { ...common, kind: "class", body, members: body?.namedChildren ?? [] })];
    }
    case "type_alias_statement": {
      const left = decl.childForFieldName("left");
      const alias = left?.type === "type" ? left.namedChild(0) : left;
      return alias ? [definition(outer, alias, { kind: "type", body: null, exported: isPublic(alias.text, container) })] : [];
    }
    case "expression_statement":
      return container.level === "module" ? assignments(decl) : [];
    default:
      return [];
  }
}

/** `NAME = …` and `NAME: T = …` at module level: the module's constants and globals. */
function assignments(statement: Node): Definition[] {
  const assignment = statement.namedChild(0);
  const left = assignment?.type === "assignment" ? assignment.childForFieldName("left") : null;
  if (left?.type !== "identifier") return [];
  return [definition(statement, left, { kind: "variable", body: null, exported: !left.text.startsWith("_") })];
}

function importsOf(node: Node): ImportRef[] {
  const line = firstLine(node);
  if (node.type === "import_statement") {
    // `import a.b as c, d`: one import per module, naming nothing inside it.
    return node.childrenForFieldName("name").map((name) => ({ specifier: moduleName(name), line, names: [] }));
  }
  const module = node.childForFieldName("module_name");
  if (!module) return [];
  const names = node.childrenForFieldName("name").map(moduleName);
  if (node.namedChildren.some((c) => c.type === "wildcard_import")) names.push("*");
  return [{ specifier: module.text, line, names }];
}

function moduleName(node: Node): string {
  return node.type === "aliased_import" ? (node.childForFieldName("name")?.text ?? "") : node.text;
}

const IMPORT_QUERY = `
(import_statement) @import
(import_from_statement) @import
`;

const REFERENCES = `
(call function: (identifier) @call)
(call function: (attribute attribute: (identifier) @call))
(identifier) @ref
(parameters (identifier) @decl)
(default_parameter name: (identifier) @decl)
(typed_parameter (identifier) @decl)
(typed_default_parameter name: (identifier) @decl)
(keyword_argument name: (identifier) @decl)
(lambda_parameters (identifier) @decl)
`;

export const python: LanguageSpec = {
  definitions,
  importQuery: IMPORT_QUERY,
  importsOf,
  referenceQuery: REFERENCES,
  ignoredNames: new Set(["self", "cls"]),
};
