/** Client side of the storage contract: transactions and REST views. */
export * from "./calls.js";
export * from "./queries.js";
export * from "./types.js";
export type { FreeStorageMarker } from "../../storage/freestorage.js";
