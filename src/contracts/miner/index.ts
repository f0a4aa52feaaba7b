/** The miner contract: node registration, stake pools on miners and sharders, block rewards. */
export { createMinerContract, MINER_FEE_EXEMPT, minerContract } from "./contract.js";
export { DKG_KEY, type DkgState, Phase, readDkg, type ShareOrSign, shareMessage } from "./dkg.js";
export { type GenesisState, minerGenesis } from "./genesis.js";
export { MINER_REST_POINTS, minerRest } from "./rest.js";
export {
  DEFAULT_MINER_CONFIG,
  type DelegatePool,
  MINER_ADDRESS,
  type MinerGlobal,
  type MinerNode,
  type MinerScConfig,
  minerNodeJson,
  type NodeKind,
  type PoolStatus,
  readGlobal as readMinerGlobal,
  readList as readMinerList,
  readLocked as readMinerLocked,
  readMagicBlock as readMinerMagicBlock,
  readNode as readMinerNode,
  readUser as readMinerUser,
  type SimpleNode,
  type UserNode,
} from "./state.js";
