/**
 * The chain's wire codec, one module per part under `codec/`: `exact-json.ts` (JSON with exact int64),
 * `reader.ts` (the validating field reader), and the codecs of transactions, blocks, confirmations and magic
 * blocks. Decoders check structure and formats only; protocol rules (hash match, signatures, time windows,
 * magic block consistency) live in `transaction.ts`, `block.ts` and `magicblock.ts`. This file re-exports
 * the codec for the layers above.
 */
export { blockFromJson, blockToJson, blockToWire, decodeBlock, encodeBlock } from "./codec/block.js";
export { confirmationFromJson, confirmationToJson, decodeConfirmation } from "./codec/confirmation.js";
export { goJsonString, parseExactJson, stringifyExactJson } from "./codec/exact-json.js";
export { decodeMagicBlock, magicBlockFromJson } from "./codec/magicblock.js";
export { describeJson } from "./codec/reader.js";
export { decodeTransaction, encodeTransaction, transactionFromJson, transactionToJson } from "./codec/transaction.js";
