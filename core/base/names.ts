/**
 * How a name someone typed is compared with the names kept (an organization, an API key, a
 * certificate or channel named where an id is asked for): spaces around it dropped, without regard to
 * case, and in one Unicode form (NFC), so that "Café" typed as e plus a combining accent (as macOS
 * and many copies give it) finds the "Café" kept with é as one character. The two look alike; a
 * lookup that told them apart would answer "no such name" about the name on the screen.
 */
export function nameKey(name: string): string {
  return name.trim().normalize("NFC").toLowerCase();
}
