/**
 * The nodes' entry into the sdk: what a node needs of the client library beyond its public API (`index.ts`). The
 * in-process transport (`nodes/io/memory-transport.ts`) builds its responses and checks its requests as the HTTP
 * transport does, and the block worker fans requests out to the sharders and agrees on their answers. Only nodes
 * import this (test/layers.test.ts); the CLIs use `index.ts`. The blobber's shard store also writes and reads around
 * the page cache with the download's helper (`direct-io.ts`).
 */

export { DIRECT_ALIGN, DirectIO, isRefusal, openDirect } from "./direct-io.js";
export { makeResponse, preflight, transportReason } from "./http-transport.js";
export { agree, requestAll } from "./multi.js";
