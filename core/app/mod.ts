/** Building a core: services, the pipeline's faces and the background work, from a config and a store. */
export { createCore, type Core, type CoreOptions } from "./create_core.ts";
export type { Services } from "../operations/services.ts";
