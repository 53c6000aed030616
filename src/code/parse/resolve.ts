/**
 * Import specifier → the repository file it names, among the paths the index knows. Only what can
 * be decided from paths alone: relative TS/JS modules, Python modules, Go packages of the same
 * repository. Packages from a registry, path aliases and the standard libraries resolve to nothing.
 */
import { languageOf } from "./languages";

const SCRIPT_EXTENSIONS = [".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts"];

/** TypeScript lets `./x.js` name `./x.ts` (the file it compiles to); the same for each pair. */
const COMPILED_FROM: Readonly<Record<string, string[]>> = {
  ".js": [".ts", ".tsx", ".d.ts"],
  ".jsx": [".tsx"],
  ".mjs": [".mts", ".d.mts"],
  ".cjs": [".cts", ".d.cts"],
};

export function resolveImport(fromPath: string, specifier: string, known: ReadonlySet<string>): string | undefined {
  switch (languageOf(fromPath)) {
    case "typescript":
    case "tsx":
    case "javascript":
      return resolveScript(fromPath, specifier, known);
    case "python":
      return resolvePython(fromPath, specifier, known);
    case "go":
      return resolveGo(specifier, known);
    default:
      return undefined;
  }
}

function resolveScript(fromPath: string, specifier: string, known: ReadonlySet<string>): string | undefined {
  if (!(specifier === "." || specifier === ".." || specifier.startsWith("./") || specifier.startsWith("../"))) return undefined;
  const target = joinPath(dirname(fromPath), specifier.split(/[?#]/)[0]!);
  if (target === undefined) return undefined;
  const candidates = [target];
  const dot = target.lastIndexOf(".");
  const extension = dot > target.lastIndexOf("/") ? target.slice(dot) : "";
  for (const source of COMPILED_FROM[extension] ?? []) candidates.push(target.slice(0, dot) + source);
  for (const ext of SCRIPT_EXTENSIONS) candidates.push(target + ext);
  for (const ext of SCRIPT_EXTENSIONS) candidates.push(`${target}/index${ext}`);
  return candidates.find((path) => path !== "" && known.has(path));
}

/**
 * `from .x import y` / `from ..pkg import z` resolve against the importing file's package;
 * `import a.b` against the repository root, then against each folder above the importing file
 * (a `src/` layout puts the import root below the repository's).
 */
function resolvePython(fromPath: string, specifier: string, known: ReadonlySet<string>): string | undefined {
  const dots = /^\.*/.exec(specifier)![0].length;
  const rest = specifier.slice(dots);
  if (rest !== "" && !/^[\w]+(\.[\w]+)*$/u.test(rest)) return undefined;
  const modulePath = rest.split(".").filter(Boolean).join("/");
  const bases: string[] = [];
  if (dots > 0) {
    let base: string | undefined = dirname(fromPath);
    for (let up = 1; up < dots && base !== undefined; up++) base = base === "" ? undefined : dirname(base);
    if (base === undefined) return undefined;
    bases.push(base);
  } else {
    if (modulePath === "") return undefined;
    const folders = dirname(fromPath).split("/").filter(Boolean);
    for (let depth = 0; depth <= folders.length; depth++) bases.push(folders.slice(0, depth).join("/"));
  }
  for (const base of bases) {
    const stem = [base, modulePath].filter(Boolean).join("/");
    const candidates = stem === "" ? ["__init__.py"] : [`${stem}.py`, `${stem}.pyi`, `${stem}/__init__.py`, `${stem}/__init__.pyi`];
    const found = candidates.find((path) => known.has(path));
    if (found) return found;
  }
  return undefined;
}

interface GoPackages {
  size: number;
  /** Folder → its alphabetically first non-test .go file. */
  firstFile: Map<string, string>;
}

/** Per known-path set: the index of Go folders, rebuilt only when the set's size changes. */
const goPackages = new WeakMap<ReadonlySet<string>, GoPackages>();

function goPackagesOf(known: ReadonlySet<string>): GoPackages {
  const cached = goPackages.get(known);
  if (cached && cached.size === known.size) return cached;
  const firstFile = new Map<string, string>();
  for (const path of known) {
    if (!path.endsWith(".go") || path.endsWith("_test.go")) continue;
    const folder = dirname(path);
    const held = firstFile.get(folder);
    if (held === undefined || path < held) firstFile.set(folder, path);
  }
  const built = { size: known.size, firstFile };
  goPackages.set(known, built);
  return built;
}

/**
 * A Go import path names a package by its module path plus folder; the module path is in go.mod,
 * which the index may not have read, so the folder is found as the longest run of trailing path
 * segments that is a folder holding Go files ("github.com/acme/app/internal/store" → "internal/store").
 */
function resolveGo(specifier: string, known: ReadonlySet<string>): string | undefined {
  const { firstFile } = goPackagesOf(known);
  const segments = specifier.split("/").filter(Boolean);
  for (let from = 0; from < segments.length; from++) {
    const found = firstFile.get(segments.slice(from).join("/"));
    if (found) return found;
  }
  return undefined;
}

function dirname(path: string): string {
  const slash = path.lastIndexOf("/");
  return slash === -1 ? "" : path.slice(0, slash);
}

/** `base` joined with a relative path, `.` and `..` applied; undefined when it climbs out of the root. */
function joinPath(base: string, relative: string): string | undefined {
  const parts = base === "" ? [] : base.split("/");
  for (const part of relative.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (parts.length === 0) return undefined;
      parts.pop();
    } else {
      parts.push(part);
    }
  }
  return parts.join("/");
}
