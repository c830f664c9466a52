/** Loaded before every test file (bunfig.toml): tests talk to real servers, so give them 30 s. */
import { setDefaultTimeout } from "bun:test";

setDefaultTimeout(30_000);
