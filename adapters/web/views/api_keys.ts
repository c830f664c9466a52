/** The API Keys tab: the list, the create form, the new key shown once, the revoke confirmation. */
import { type KeyListItem, type SignedIn, mayManageKeys, type ApiKeyView } from "../../../core/accounts/mod.ts";
import { html, type Html } from "../html.ts";
import { formToken, page, when } from "../layout.ts";
import { onceField } from "../once.ts";

export interface ApiKeysView {
  me: SignedIn;
  keys: KeyListItem[];
  notice?: string | null;
  error?: string | null;
  /** What the create form held when it failed. */
  form?: { name?: string; mode?: string };
  /** Just created: the only time its secret is shown. */
  created?: { view: ApiKeyView; key: string };
}

export function masked(key: Pick<ApiKeyView, "prefix" | "last4">): string {
  return `${key.prefix}…${key.last4}`;
}

export function apiKeysPage(view: ApiKeysView): Html {
  const { me } = view;
  const manage = mayManageKeys(me.user.role);
  return page(
    { title: "API Keys", me, tab: "api-keys", notice: view.notice, error: view.error },
    html`<h1>API Keys</h1>
<p class="muted">Keys let programs call the API (<code>Authorization: Bearer ck_live_…</code>). A key acts with the role of the user who
created it. Live keys see live data, test keys separate test data.</p>
${view.created ? createdKey(view.created) : ""}
${manage ? createForm(me, view.form) : html`<p class="notice" role="status">As a member you can see the keys but not create or revoke them.</p>`}
<h2 id="keys-heading">Keys of ${me.organization.name}</h2>
${view.keys.length === 0 ? html`<p>No keys yet.</p>` : keyTable(view.keys, manage)}`,
  );
}

function createdKey(created: { view: ApiKeyView; key: string }): Html {
  return html`<section class="card" aria-labelledby="new-key-heading">
<h2 id="new-key-heading">Your new API key “${created.view.name}”</h2>
<p class="warning" role="alert"><strong>Copy this key now. It will not be shown again:</strong> certkeeper keeps only a hash of it.
If you lose it, revoke it and create a new one.</p>
<label for="new-key">API key (${created.view.mode})</label>
<div class="secret"><input id="new-key" type="text" readonly value="${created.key}" autocomplete="off" spellcheck="false" data-new-key>
<button type="button" data-copy="new-key" hidden>Copy</button></div>
<p aria-live="polite" class="small" data-copy-status></p>
<a class="button secondary" href="/settings/api-keys">Done</a>
</section>`;
}

function createForm(me: SignedIn, form: ApiKeysView["form"] = {}): Html {
  const mode = form.mode === "test" ? "test" : "live";
  return html`<form class="card" method="post" action="/settings/api-keys" aria-labelledby="create-heading">
<h2 id="create-heading">Create API Key</h2>
${formToken(me)}${onceField()}
<label for="key-name">Name</label>
<input id="key-name" name="name" type="text" required maxlength="100" value="${form.name ?? ""}" aria-describedby="key-name-hint">
<p id="key-name-hint" class="muted small">Say where it is used, such as “Production deploy pipeline”.</p>
<fieldset><legend>Mode</legend>
<label><input type="radio" name="mode" value="live"${mode === "live" ? html` checked` : ""}> Live (<code>ck_live_</code>)</label>
<label><input type="radio" name="mode" value="test"${mode === "test" ? html` checked` : ""}> Test (<code>ck_test_</code>)</label>
</fieldset>
<button type="submit">Create API Key</button>
</form>`;
}

function keyTable(keys: KeyListItem[], manage: boolean): Html {
  return html`<div class="table-wrap"><table class="stack" aria-labelledby="keys-heading">
<thead><tr><th scope="col">Name</th><th scope="col">Mode</th><th scope="col">Key</th><th scope="col">Created by</th>
<th scope="col">Created</th><th scope="col">Last used</th><th scope="col">State</th>${manage ? html`<th scope="col"><span class="visually-hidden">Actions</span></th>` : ""}</tr></thead>
<tbody>${keys.map(
    (key) => html`<tr data-key-id="${key.id}">
<td data-label="Name">${key.name}</td><td data-label="Mode"><span class="badge mode-${key.mode}">${key.mode}</span></td><td data-label="Key" class="mono">${masked(key)}</td>
<td data-label="Created by">${key.createdBy ?? html`<span class="muted">removed user</span>`}</td><td data-label="Created">${when(key.createdAt)}</td><td data-label="Last used">${when(key.lastUsedAt)}</td>
<td data-label="State">${key.revokedAt ? html`<span class="badge state-revoked">revoked ${when(key.revokedAt)}</span>` : html`<span class="badge state-active">active</span>`}</td>
${manage ? html`<td class="actions">${key.revokedAt ? "" : revokeCell(key)}</td>` : ""}
</tr>`,
  )}</tbody></table></div>`;
}

/** The revoke link, or for an admin looking at an owner's key, why there is none. */
function revokeCell(key: KeyListItem): Html {
  return key.mayRevoke
    ? html`<a href="/settings/api-keys/${key.id}/revoke">Revoke<span class="visually-hidden"> ${key.name}</span></a>`
    : html`<span class="muted small" data-read-only>An owner's key: only owners may revoke it</span>`;
}

export function revokeKeyPage(me: SignedIn, key: KeyListItem): Html {
  return page(
    { title: "Revoke API key", me, tab: "api-keys" },
    html`<h1>Revoke API key “${key.name}”?</h1>
<section class="card">
<p>Key <code>${masked(key)}</code> (${key.mode}), created by ${key.createdBy ?? "a removed user"} on ${when(key.createdAt)}.</p>
${
  key.revokedAt
    ? html`<p>This key was already revoked on ${when(key.revokedAt)}.</p><a class="button secondary" href="/settings/api-keys">Back to API Keys</a>`
    : html`<p><strong>Every request with this key is refused from the next one on.</strong> This cannot be undone.</p>
<form method="post" action="/settings/api-keys/${key.id}/revoke">${formToken(me)}
<button type="submit" class="danger">Revoke key</button> <a class="button secondary" href="/settings/api-keys">Cancel</a></form>`
}
</section>`,
  );
}
