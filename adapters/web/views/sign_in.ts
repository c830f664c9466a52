/** The sign-in page. */
import { html, type Html } from "../html.ts";
import { page } from "../layout.ts";

export interface SignInView {
  formToken: string;
  email?: string;
  next: string;
  notice?: string | null;
  error?: string | null;
}

export function signInPage(view: SignInView): Html {
  return page(
    { title: "Sign in", narrow: true, notice: view.notice, error: view.error },
    html`<h1>Sign in to certkeeper</h1>
<form class="card" method="post" action="/sign-in">
<input type="hidden" name="_csrf" value="${view.formToken}">
<input type="hidden" name="next" value="${view.next}">
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required value="${view.email ?? ""}"${view.email ? "" : html` autofocus`}>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required${view.email ? html` autofocus` : ""}>
<button type="submit">Sign in</button>
</form>
<p class="muted small">No account? An owner or admin of your organization adds you under Members. On the server, in
certkeeper's folder, the first owner is made with <code>npm run --silent certkeeper -- user create --org ORG_ID --email you@example.com --role owner --password -</code>
(<code>npm run --silent certkeeper -- org list</code> shows ORG_ID), and a forgotten password is replaced with
<code>npm run --silent certkeeper -- user set-password --email you@example.com</code>.</p>`,
  );
}
