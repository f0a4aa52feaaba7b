/** Client side of the storage contract: transactions and REST views. */

export type { FreeStorageMarker } from "../../storage/freestorage.js";
export * from "./calls.js";
export * from "./queries.js";
export * from "./types.js";
