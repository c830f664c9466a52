/** Notification transports whose HTTP posts wait until the test answers them (emails go nowhere). */
import type { HttpResult, OutgoingHttpRequest, Transports } from "../../core/notify/ports.ts";

export function heldTransport() {
  const held: Array<{ request: OutgoingHttpRequest; answer: (result: HttpResult) => void }> = [];
  const transports: Transports = {
    http: { post: (request) => new Promise((answer) => held.push({ request, answer })) },
    email: { send: async () => {} },
  };
  return { transports, held };
}
