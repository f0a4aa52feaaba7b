/** The storage protocol, pure: erasure coding, Merkle trees, markers, prices, request auth, the file tree, the API. */
export * from "./api.js";
export * from "./auth.js";
export * from "./authticket.js";
export * from "./challenge.js";
export * from "./contract-api.js";
export * from "./encryption.js";
export * from "./errors.js";
export * from "./grants.js";
export * from "./layout.js";
export * from "./markers.js";
export * from "./merkle.js";
export * from "./paths.js";
export * from "./pricing.js";
export * from "./reedsolomon.js";
export * from "./reedsolomon-simd.js";
export * from "./reftree.js";
export * from "./thumbnail.js";
