/** Credentials in a URL masked, wherever one is shown (the settings line at start, errors, logs). */

export const MASK = "********";

/** Query parameters that carry a credential (named as services name them). */
const SECRET_NAMES = "authToken|token|access_token|password|secret|key|apikey|api_key|api-key|sig|signature";
/** Their values in a URL: up to the next parameter or the fragment. */
const SECRET_IN_URL = new RegExp(`([?&](?:${SECRET_NAMES})=)[^&#]*`, "gi");
/** Their values in free text, where a URL ends at a space or a quote. */
const SECRET_IN_TEXT = new RegExp(`([?&](?:${SECRET_NAMES})=)[^&#\\s"']*`, "gi");

/**
 * Every URL's credentials in a text masked, wherever they stand in it (an error quoting one URL of a
 * list): the user information after each `//` (up to its `@`), and token query parameters.
 */
export function maskUrlsIn(text: string): string {
  return text
    // Greedy to the authority's last @, as URL parsers read it: a password holding an @ is masked whole.
    .replace(/\/\/([^\s"'/?#]*)@/g, (_match, userinfo: string) => {
      const colon = userinfo.indexOf(":");
      return `//${colon >= 0 ? `${userinfo.slice(0, colon)}:${MASK}` : MASK}@`;
    })
    .replace(SECRET_IN_TEXT, `$1${MASK}`);
}

/**
 * A URL's password and token query parameters masked; anything that is not a URL as it is. The user
 * information ends at the authority's last `@`, as URL parsers (and so the transports) read it: a
 * password holding an `@` is masked whole. A user without a password is taken for a token and masked.
 * A URL mistyped without its scheme's colon (`https//user:pass@host`) is masked alike: it is quoted
 * back in the error that refuses it.
 */
export function maskUrl(text: string): string {
  let masked = text;
  // Greedy up to the end of the authority (the first /, ? or #): its last @.
  const userinfo = /^((?:[a-z][a-z0-9+.-]*:?)?\/\/)([^/?#]*)@/i.exec(text);
  if (userinfo) {
    const colon = userinfo[2]!.indexOf(":");
    masked = `${userinfo[1]}${colon >= 0 ? `${userinfo[2]!.slice(0, colon)}:${MASK}` : MASK}@${text.slice(userinfo[0].length)}`;
  }
  return masked.replace(SECRET_IN_URL, `$1${MASK}`);
}
