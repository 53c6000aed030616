/** Go: functions, methods (qualified by their receiver type), types, package-level names; import specs. */
import type { Node } from "web-tree-sitter";
import { type Definition, type LanguageSpec, definition, firstLine, unquote } from "../spec";
import type { ImportRef } from "../types";

/** Go exports exactly the names that start with an upper-case letter. */
function isExported(name: string): boolean {
  return /^\p{Lu}/u.test(name);
}

function definitions(node: Node): Definition[] {
  switch (node.type) {
    case "function_declaration":
    case "method_declaration": {
      const nameNode = node.childForFieldName("name");
      const name = nameNode?.text ?? "";
      const receiver = node.type === "method_declaration" ? receiverType(node) : undefined;
      return [
        definition(node, nameNode, {
          kind: receiver === undefined ? "function" : "method",
          exported: isExported(name),
          body: node.childForFieldName("body"),
          ...(receiver ? { qualifier: receiver } : {}),
        }),
      ];
    }
    case "type_declaration":
      return specs(node, ["type_spec", "type_alias"], (spec) => (spec.childForFieldName("type")?.type === "interface_type" ? "interface" : "type"));
    case "const_declaration":
    case "var_declaration":
      return specs(node, ["const_spec", "var_spec"], () => "variable");
    default:
      return [];
  }
}

/** `type ( A struct{}; B int )`, `var ( … )`: one definition per name of each spec. */
function specs(declaration: Node, types: string[], kind: (spec: Node) => string): Definition[] {
  const found = specNodes(declaration, types);
  const single = found.length === 1;
  return found.flatMap((spec) =>
    spec.childrenForFieldName("name").map((nameNode) => definition(single ? declaration : spec, nameNode, { kind: kind(spec), exported: isExported(nameNode.text), body: null })),
  );
}

/** The specs of a declaration, whether written alone or in a parenthesized list. */
function specNodes(declaration: Node, types: string[]): Node[] {
  const found: Node[] = [];
  const visit = (node: Node) => {
    for (const child of node.namedChildren) {
      if (types.includes(child.type)) found.push(child);
      else if (child.type.endsWith("_spec_list")) visit(child);
    }
  };
  visit(declaration);
  return found;
}

/** `func (s *Server[T]) Serve()` → "Server". */
function receiverType(method: Node): string | undefined {
  let type =
    method
      .childForFieldName("receiver")
      ?.namedChildren.find((p) => p.type === "parameter_declaration")
      ?.childForFieldName("type") ?? null;
  while (type && (type.type === "pointer_type" || type.type === "generic_type" || type.type === "parenthesized_type")) {
    type = type.type === "generic_type" ? type.childForFieldName("type") : type.namedChild(0);
  }
  return type?.text;
}

function importsOf(declaration: Node): ImportRef[] {
  return specNodes(declaration, ["import_spec"]).flatMap(importSpec);
}

function importSpec(spec: Node): ImportRef[] {
  const path = spec.childForFieldName("path");
  if (!path) return [];
  const alias = spec.childForFieldName("name");
  return [{ specifier: unquote(path.text), line: firstLine(spec), names: alias ? [alias.text] : [] }];
}

const REFERENCES = `
(call_expression function: (identifier) @call)
(call_expression function: (selector_expression field: (field_identifier) @call))
(identifier) @ref
(type_identifier) @ref
(selector_expression field: (field_identifier) @ref)
(parameter_declaration name: (identifier) @decl)
(short_var_declaration left: (expression_list (identifier) @decl))
(range_clause left: (expression_list (identifier) @decl))
`;

export const go: LanguageSpec = {
  definitions,
  importQuery: "(import_declaration) @import",
  importsOf,
  referenceQuery: REFERENCES,
  ignoredNames: new Set(["_"]),
};
