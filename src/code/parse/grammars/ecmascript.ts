/** TypeScript, TSX and JavaScript: one outline, two dialects of the reference query. */
import type { Node } from "web-tree-sitter";
import { type Container, type Definition, type LanguageSpec, definition, firstLine, unquote } from "../spec";
import type { ImportRef } from "../types";

const FUNCTION_VALUES = new Set(["arrow_function", "function_expression", "function", "generator_function"]);

function definitions(node: Node, container: Container): Definition[] {
  if (container.level === "class") return memberDefinitions(node, container);
  switch (node.type) {
    case "export_statement": {
      const declaration = node.childForFieldName("declaration");
      if (declaration) return declarationDefinitions(declaration, node, true, container);
      // `export default function () {}` / `export default class {}`: named "default" when anonymous.
      const value = node.childForFieldName("value");
      if (value && (FUNCTION_VALUES.has(value.type) || value.type === "class")) {
        return declarationDefinitions(value, node, true, container);
      }
      return [];
    }
    case "ambient_declaration": {
      const inner = node.namedChild(0);
      return inner ? declarationDefinitions(inner, node, false, container) : [];
    }
    case "expression_statement": {
      // The grammar reads `namespace A {}` after some statements as an expression statement.
      const inner = node.namedChild(0);
      return inner?.type === "internal_module" ? declarationDefinitions(inner, node, false, container) : [];
    }
    default:
      return declarationDefinitions(node, node, false, container);
  }
}

function declarationDefinitions(decl: Node, outer: Node, exported: boolean, container: Container): Definition[] {
  const nameNode = decl.childForFieldName("name");
  const named = (fields: Omit<Definition, "node" | "name" | "nameNode" | "declaration" | "exported">, name = nameNode?.text ?? "default") => [
    definition(outer, nameNode, { ...fields, name, exported: exported || container.exportedNames.has(name) }),
  ];
  switch (decl.type) {
    case "function_declaration":
    case "generator_function_declaration":
    case "function_signature":
    case "function_expression":
    case "function":
    case "generator_function":
    case "arrow_function":
      return named({ kind: "function", body: decl.childForFieldName("body") });
    case "class_declaration":
    case "abstract_class_declaration":
    case "class": {
      const body = decl.childForFieldName("body");
      return named({ kind: "class", body, members: body?.namedChildren ?? [] });
    }
    case "interface_declaration":
      return named({ kind: "interface", body: decl.childForFieldName("body") });
    case "type_alias_declaration":
      return named({ kind: "type", body: null });
    case "enum_declaration":
      return named({ kind: "enum", body: decl.childForFieldName("body") });
    case "internal_module":
    case "module": {
      // `namespace A.B {}` and `declare module "x" {}`: a container whose members are statements.
      const body = decl.childForFieldName("body");
      const name = nameNode?.type === "string" ? unquote(nameNode.text) : (nameNode?.text ?? "");
      return named({ kind: "namespace", body, members: body?.namedChildren ?? [] }, name);
    }
    case "lexical_declaration":
    case "variable_declaration":
      return variableDefinitions(decl, outer, exported, container);
    default:
      return [];
  }
}

/** `const a = () => …, b = 1`: a function and a variable; destructuring patterns define nothing named here. */
function variableDefinitions(decl: Node, outer: Node, exported: boolean, container: Container): Definition[] {
  const declarators = decl.namedChildren.filter((d) => d.type === "variable_declarator" && d.childForFieldName("name")?.type === "identifier");
  return declarators.map((declarator) => {
    const nameNode = declarator.childForFieldName("name");
    const value = declarator.childForFieldName("value");
    const whole = declarators.length === 1 ? outer : declarator;
    const name = nameNode?.text ?? "";
    const fields = { exported: exported || container.exportedNames.has(name), declaration: whole };
    if (value && FUNCTION_VALUES.has(value.type)) return definition(whole, nameNode, { ...fields, kind: "function", body: value.childForFieldName("body") });
    if (value?.type === "class") {
      const body = value.childForFieldName("body");
      return definition(whole, nameNode, { ...fields, kind: "class", body, members: body?.namedChildren ?? [] });
    }
    return definition(whole, nameNode, { ...fields, kind: "variable", body: null });
  });
}

function memberDefinitions(node: Node, container: Container): Definition[] {
  let body: Node | null;
  switch (node.type) {
    case "method_definition":
    case "method_signature":
    case "abstract_method_signature":
      body = node.childForFieldName("body");
      break;
    case "public_field_definition": // TypeScript
    case "field_definition": {
      // JavaScript
      // A field holding a function (`handle = () => {}`) is a method in all but syntax.
      const value = node.childForFieldName("value");
      if (!value || !FUNCTION_VALUES.has(value.type)) return [];
      body = value.childForFieldName("body");
      break;
    }
    default:
      return [];
  }
  const nameNode = node.childForFieldName("name") ?? node.childForFieldName("property");
  const name = nameNode?.text ?? "";
  const isPrivate = name.startsWith("#") || node.namedChildren.some((c) => c.type === "accessibility_modifier" && c.text === "private");
  return [definition(node, nameNode, { kind: "method", body, exported: container.exported && !isPrivate })];
}

/** Names exported by a separate `export { a, b as c }` or `export default a`, without a source. */
function exportedNames(root: Node): Set<string> {
  const names = new Set<string>();
  for (const node of root.namedChildren) {
    if (node.type !== "export_statement" || node.childForFieldName("source") || node.childForFieldName("declaration")) continue;
    const value = node.childForFieldName("value");
    if (value?.type === "identifier") names.add(value.text);
    for (const clause of node.namedChildren) {
      if (clause.type !== "export_clause") continue;
      for (const specifier of clause.namedChildren) {
        const name = specifier.childForFieldName("name");
        if (name) names.add(name.text);
      }
    }
  }
  return names;
}

function importsOf(node: Node): ImportRef[] {
  const line = firstLine(node);
  switch (node.type) {
    case "import_statement": {
      const source = node.childForFieldName("source");
      if (source) return [{ specifier: unquote(source.text), line, names: importedNames(node) }];
      // `import x = require("y")`
      const required = node.namedChildren.find((c) => c.type === "import_require_clause")?.childForFieldName("source");
      return required ? [{ specifier: unquote(required.text), line, names: [] }] : [];
    }
    case "export_statement": {
      const source = node.childForFieldName("source");
      if (!source) return [];
      const clause = node.namedChildren.find((c) => c.type === "export_clause");
      const names = clause ? clause.namedChildren.map((s) => s.childForFieldName("name")?.text ?? "").filter(Boolean) : ["*"];
      return [{ specifier: unquote(source.text), line, names }];
    }
    case "call_expression": {
      const first = node.childForFieldName("arguments")?.namedChild(0);
      return first?.type === "string" ? [{ specifier: unquote(first.text), line, names: [] }] : [];
    }
    default:
      return [];
  }
}

function importedNames(statement: Node): string[] {
  const names: string[] = [];
  const clause = statement.namedChildren.find((c) => c.type === "import_clause");
  for (const part of clause?.namedChildren ?? []) {
    if (part.type === "identifier") names.push("default");
    else if (part.type === "namespace_import") names.push("*");
    else if (part.type === "named_imports") {
      for (const specifier of part.namedChildren) {
        const name = specifier.childForFieldName("name");
        if (name) names.push(name.text);
      }
    }
  }
  return names;
}

const IMPORT_QUERY = `
(import_statement) @import
(export_statement source: (_)) @import
((call_expression function: (identifier) @fn arguments: (arguments . (string))) @import (#eq? @fn "require"))
(call_expression function: (import) arguments: (arguments . (string))) @import
`;

const REFERENCES = `
(call_expression function: (identifier) @call)
(call_expression function: (member_expression property: (_) @call))
(new_expression constructor: (identifier) @call)
(new_expression constructor: (member_expression property: (_) @call))
(identifier) @ref
(member_expression property: (property_identifier) @ref)
(shorthand_property_identifier) @ref
(variable_declarator name: (identifier) @decl)
(arrow_function parameter: (identifier) @decl)
(catch_clause parameter: (identifier) @decl)
`;

/** Parameters are bare identifiers in JavaScript and wrapped in TypeScript, which also names types. */
const JAVASCRIPT_REFERENCES = `
(formal_parameters (identifier) @decl)
`;

const TYPESCRIPT_REFERENCES = `
(type_identifier) @ref
(required_parameter pattern: (identifier) @decl)
(optional_parameter pattern: (identifier) @decl)
`;

export function ecmascript(dialect: "typescript" | "javascript"): LanguageSpec {
  return {
    definitions,
    exportedNames,
    importQuery: IMPORT_QUERY,
    importsOf,
    referenceQuery: REFERENCES + (dialect === "typescript" ? TYPESCRIPT_REFERENCES : JAVASCRIPT_REFERENCES),
  };
}
