/** The email transport without an SMTP server: every message becomes a `.eml` file in a folder. */
import { mkdir, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Transporter } from "nodemailer";
import type { EmailMessage, EmailTransport } from "../../core/notify/mod.ts";
import { loadNodemailer, mailOptions } from "./smtp.ts";
import { openedOnce } from "./lazy.ts";

export const DEFAULT_OUTBOX_DIR = "./data/outbox";

/**
 * Writes each message as real MIME (built by nodemailer's stream transport) to
 * `<dir>/<event id>+<channel id>.eml`; a repeated delivery overwrites its earlier file.
 *
 * @example
 * const email = createOutboxTransport({ dir: "./data/outbox" });
 * await email.send(message); // ./data/outbox/evt_…+ch_….eml
 */
export function createOutboxTransport(options: { dir?: string } = {}): EmailTransport & { readonly dir: string } {
  const dir = options.dir ?? DEFAULT_OUTBOX_DIR;
  const transport = openedOnce<Transporter>(() => loadNodemailer().then((nodemailer) => nodemailer.createTransport({ streamTransport: true, buffer: true, newline: "windows" })));
  return {
    dir,
    async send(message: EmailMessage): Promise<void> {
      try {
        const info = await (await transport.get()).sendMail(mailOptions(message));
        await mkdir(dir, { recursive: true });
        const file = join(dir, `${fileName(message.messageId)}.eml`);
        const partial = `${file}.${process.pid}.tmp`;
        await writeFile(partial, info.message as Buffer);
        await rename(partial, file); // readers never see half a message
      } catch (error) {
        throw new Error(`Email to ${message.to} was not written to ${dir}: ${(error as Error).message}`);
      }
    },
  };
}

/** `<evt_1+ch_2@certkeeper>` → `evt_1+ch_2`; anything unsafe in a file name becomes `_`. */
function fileName(messageId: string): string {
  const name = messageId.replace(/^<|>$/g, "").replace(/@[^@]*$/, "").replace(/[^A-Za-z0-9._+-]/g, "_");
  return name.replace(/^\.+/, "_") || "message";
}
