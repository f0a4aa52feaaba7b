/** Bounded concurrency for async work over a list (no I/O of its own). */

/** Run `fn` over `items`, in their order, with at most `limit` calls in flight at once. */
export async function eachLimited<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await fn(items[next++] as T);
    }),
  );
}
