/** Cairn version, printed by `zbox version` / `zwallet version` and carried by nodes. */
export const VERSION = "0.1.0";
