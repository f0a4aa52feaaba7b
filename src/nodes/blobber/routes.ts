/**
 * The one place where route groups are mounted on every blobber (the process and the in-process network use
 * the same list): the file API (`src/nodes/blobber/files/`, upload, download, markers) and the challenge loop
 * (`src/nodes/blobber/challenges/`, proofs of storage) register here.
 *
 * A registrar receives the blobber's fastify app and its {@link BlobberContext} (identity, configuration, KV
 * for metadata, shard store for content, allocation cache, usage counters, clock, logger, chain client).
 */
import { registerChallenges } from "./challenges/mount.js";
import type { BlobberContext, RouteRegistrar } from "./context.js";
import { registerFileApi } from "./files/mount.js";

export type { BlobberContext, RouteRegistrar };

/** Route groups mounted on every blobber, in order. Add the file API's registration function here. */
export const BLOBBER_ROUTES: RouteRegistrar[] = [registerFileApi, registerChallenges];
