/** The Account tab: who you are, and the form to change your own password. */
import { MIN_PASSWORD_LENGTH, type SignedIn } from "../../../core/accounts/mod.ts";
import { html, type Html } from "../html.ts";
import { formToken, page, when } from "../layout.ts";

export interface AccountView {
  me: SignedIn;
  notice?: string | null;
  error?: string | null;
}

export function accountPage(view: AccountView): Html {
  const { me } = view;
  return page(
    { title: "Account", me, tab: "account", notice: view.notice, error: view.error },
    html`<h1>Your account</h1>
<section class="card" aria-labelledby="who-heading">
<h2 id="who-heading">Signed in as</h2>
<dl class="fields"><dt>Email</dt><dd>${me.user.email}</dd><dt>Role</dt><dd>${me.user.role}</dd>
<dt>Organization</dt><dd>${me.organization.name} <span class="mono small">${me.organization.id}</span></dd>
<dt>This session began</dt><dd>${when(new Date(me.session.createdAt).toISOString())}</dd></dl>
</section>
<form class="card" method="post" action="/settings/account/password" aria-labelledby="password-heading">
<h2 id="password-heading">Change your password</h2>
${formToken(me)}
<label for="current-password">Current password</label>
<input id="current-password" name="current" type="password" required autocomplete="current-password">
<label for="new-password">New password</label>
<input id="new-password" name="next" type="password" required minlength="${MIN_PASSWORD_LENGTH}" autocomplete="new-password" aria-describedby="new-password-hint">
<label for="confirm-password">New password, again</label>
<input id="confirm-password" name="confirm" type="password" required minlength="${MIN_PASSWORD_LENGTH}" autocomplete="new-password">
<p id="new-password-hint" class="muted small">At least ${MIN_PASSWORD_LENGTH} characters. Changing it signs you out everywhere else.</p>
<button type="submit">Change password</button>
</form>`,
  );
}
