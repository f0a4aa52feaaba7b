/** zbox storage commands (allocations, blobbers, stake, read/write/challenge pools). */
import type { Command } from "commander";
import type { CliIo } from "../common.js";
import { registerAllocationCommands } from "./allocations.js";
import { registerBlobberCommands } from "./blobbers.js";
import { registerPoolCommands } from "./pools.js";
import { registerStakePoolCommands } from "./stakepools.js";

/** Register every storage command on zbox. */
export function registerStorageCommands(program: Command, io: CliIo): void {
  registerAllocationCommands(program, io);
  registerBlobberCommands(program, io);
  registerStakePoolCommands(program, io);
  registerPoolCommands(program, io);
}
