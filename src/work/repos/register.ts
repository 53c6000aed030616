import { z } from "zod";
import { defineTool } from "../../core/define-tool";
import { invalidInput, ToolError } from "../../core/errors";
import { parseRepoRef, redactRemote, registerRepository, repositorySchema } from "./model";

export const repoRegisterTool = defineTool({
  name: "repo_register",
  title: "Register a repository",
  toolset: "repos",
  // The remote's credentials are stripped by the tool itself before anything is stored or echoed.
  verbatim: ["remote_url"],
  description:
    "Resolve or register a git repository, de-duplicated by its normalized remote URL (credentials are stripped and never stored). Pass remote_url (a URL, or owner/name alone), or owner and name (host defaults to github.com). A default_branch given for a repository already registered with another one is refused with conflict (the registered one stands). The server cannot see your working directory, so there is no autodetection here.",
  input: z.object({
    remote_url: z.string().max(500).optional().describe("The remote (https://github.com/acme/api(.git), git@github.com:acme/api.git, ssh://…) or owner/name alone."),
    host: z.string().max(200).optional().describe("Git host (default github.com) when giving owner and name."),
    owner: z.string().max(100).optional().describe("Owner, with name."),
    name: z.string().max(100).optional().describe("Repository name, with owner."),
    slug: z.string().max(200).optional().describe("owner/name (or a remote URL), instead of owner and name."),
    default_branch: z.string().min(1).max(200).optional().describe("Default branch (default main); fixed at registration."),
  }),
  output: z.object({ repository: repositorySchema.describe("The repository."), created: z.boolean().describe("False when it was already registered.") }),
  annotations: { readOnly: false, destructive: false, idempotent: true, openWorld: false },
  idempotency: "derived",
  run: async (ctx, input) => {
    // Either field takes either form: a remote URL or owner/name alone.
    const remote = input.remote_url ?? input.slug ?? (input.owner && input.name ? `${input.owner}/${input.name}` : undefined);
    if (!remote) throw invalidInput("Nothing to register.", "Pass remote_url (the output of `git remote get-url origin`, or owner/name), or owner and name.");
    const parts = parseRepoRef(remote, input.host);
    if (!parts)
      throw invalidInput(
        `'${redactRemote(remote)}' is not a repository remote this server understands.`,
        "Use owner/name, https://host/owner/name, git@host:owner/name.git or ssh://git@host/owner/name.",
      );
    const result = await registerRepository(ctx, parts, input.default_branch ?? "main");
    // Found, not created: a default branch the caller named but did not get would be a write acknowledged and dropped.
    if (!result.created && input.default_branch !== undefined && input.default_branch !== result.repository.default_branch) {
      throw new ToolError("conflict", `${result.repository.slug} is already registered with default branch '${result.repository.default_branch}', not '${input.default_branch}'.`, {
        hint: "Omit default_branch to resolve the registered repository; its default branch is fixed at registration.",
      });
    }
    return result;
  },
  summarize: (r) => `${r.created ? "Registered" : "Found"} ${r.repository.slug} (${r.repository.id}).`,
});
