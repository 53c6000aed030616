/**
 * Group commit for claims. A claim is a few statements that must land together (the compare-and-swap
 * and its activity row) and an answer read from their results. Claims that queued up while the last
 * D1 batch was in flight go into ONE batch, each member's statements in arrival order: a D1 batch is
 * one transaction run statement by statement, so every member sees what the members before it wrote
 * (a claim-next takes the best task the earlier members left) and nothing is written unless all is.
 * If that batch fails, its members run again one at a time, so only the faulty one fails.
 */

/** One claim that can share a D1 batch with others. */
export interface BatchMember<R> {
  /** Its statements, built afresh on each call (a failed group is retried member by member). */
  statements(): D1PreparedStatement[];
  /** Its answer from the results of its own statements, in order; it may read more. */
  settle(results: D1Result[]): Promise<R>;
  /** The lease it handed out, if any, for the claims object to track. */
  leaseOf?(answer: R): { taskId: string; expiresAt: string } | null;
}

/** Runs one member in a batch of its own. */
export async function commitAlone<R>(d1: D1Database, member: BatchMember<R>): Promise<R> {
  return member.settle(await d1.batch(member.statements()));
}

/**
 * Commits the members in one D1 batch and answers each. A batch that fails was rolled back whole, so
 * the members are then run one by one, in the same order: the others still go through and the faulty
 * one gets its own error.
 */
export async function commitTogether(d1: D1Database, members: ReadonlyArray<BatchMember<unknown>>): Promise<Array<PromiseSettledResult<unknown>>> {
  if (members.length === 1) return Promise.allSettled([commitAlone(d1, members[0]!)]);
  let built: D1PreparedStatement[][];
  let results: D1Result[];
  try {
    built = members.map((m) => m.statements());
    results = await d1.batch(built.flat());
  } catch {
    const settled: Array<PromiseSettledResult<unknown>> = [];
    for (const m of members) settled.push(...(await Promise.allSettled([commitAlone(d1, m)])));
    return settled;
  }
  let at = 0;
  return Promise.allSettled(
    members.map((m, i) => {
      const own = results.slice(at, at + built[i]!.length);
      at += built[i]!.length;
      return m.settle(own);
    }),
  );
}
