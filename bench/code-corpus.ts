/**
 * Repositories for the code index benchmark, made of real published sources: the files of pinned
 * packages in node_modules, served by the fake GitHub as a repository's tarball. Build output the
 * project's own repository would not hold (rxjs's dist/, three's build/) is left out; everything
 * else goes in as published, so the index's own rules decide what it skips.
 */
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import type { ArchiveTree } from "../test/support/github/fake-archive";

export interface PackageSource {
  /** The package's folder name in node_modules. */
  name: string;
  /** Only these top-level entries of the package (all when omitted). */
  only?: string[];
  /** Top-level entries left out. */
  except?: string[];
  /** Where its files go in the repository ('' for the root). */
  prefix: string;
}

async function walk(dir: string, rel: string, out: Map<string, string>): Promise<void> {
  const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1));
  for (const e of entries) {
    const full = path.join(dir, e.name);
    const relPath = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) await walk(full, relPath, out);
    else if (e.isFile()) out.set(relPath, full);
  }
}

/** The repository tree of the given packages' files (bytes as published, binaries included). */
export async function packageTree(sources: PackageSource[]): Promise<ArchiveTree> {
  const tree: ArchiveTree = {};
  for (const s of sources) {
    const files = new Map<string, string>();
    await walk(path.join("node_modules", s.name), "", files);
    for (const [rel, full] of files) {
      const top = rel.split("/")[0]!;
      if ((s.only && !s.only.includes(top)) || s.except?.includes(top)) continue;
      tree[s.prefix ? `${s.prefix}/${rel}` : rel] = new Uint8Array(await readFile(full));
    }
  }
  return tree;
}

/** The question set's repository: rxjs 7.8.2 as published, without the compiled dist/. */
export const QUALITY_SOURCES: PackageSource[] = [{ name: "rxjs", except: ["dist"], prefix: "" }];

/**
 * The scale repository, about 2,000 files of real code in one tree: three.js (its src/ and the
 * examples/jsm/ add-ons, JavaScript), rxjs (TypeScript) and zod's src/ (TypeScript).
 */
export const SCALE_SOURCES: PackageSource[] = [
  { name: "three", except: ["build"], prefix: "three" },
  { name: "rxjs", except: ["dist"], prefix: "rxjs" },
  { name: "zod", only: ["src", "README.md", "package.json"], prefix: "zod" },
];
