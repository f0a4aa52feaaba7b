/** Build the file service and clean up what a crash may have left (temp data, unreferenced objects). */
import { type AllocationView, FileService, type FileServiceDeps } from "./service.js";

export type { AllocationView, FileService };

export async function createFileServiceFrom(deps: FileServiceDeps): Promise<FileService> {
  const s = new FileService(deps);
  await s.recover();
  return s;
}
