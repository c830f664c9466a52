/** The Members tab: users and roles, the add form, the remove confirmation. */
import { type MemberView, type SignedIn, assignableRoles, mayChangeMember, MIN_PASSWORD_LENGTH } from "../../../core/accounts/mod.ts";
import type { Role } from "../../../core/base/mod.ts";
import { html, type Html } from "../html.ts";
import { formToken, page, when } from "../layout.ts";

export interface MembersView {
  me: SignedIn;
  members: MemberView[];
  notice?: string | null;
  error?: string | null;
  /** What the add form held when it failed (never the password). */
  form?: { email?: string; role?: string };
}

const ROLE_HINTS: Record<Role, string> = {
  owner: "everything, including owners",
  admin: "everything but owners",
  member: "read only",
};

export function membersPage(view: MembersView): Html {
  const { me } = view;
  const roles = assignableRoles(me.user.role);
  const owners = view.members.filter((member) => member.role === "owner").length;
  return page(
    { title: "Members", me, tab: "members", notice: view.notice, error: view.error },
    html`<h1>Members</h1>
<p class="muted">Owners may do everything; admins everything but add, change or remove owners; members only read. A user's API keys
act with their role, and are revoked when the user is removed.</p>
<h2 id="members-heading">Users of ${me.organization.name}</h2>
<div class="table-wrap"><table class="stack" aria-labelledby="members-heading">
<thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Added</th><th scope="col">Sign-in</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>${view.members.map((member) => memberRow(member, { me, roles, owners }))}</tbody></table></div>
<form class="card" method="post" action="/settings/members" id="add-member" aria-labelledby="add-heading">
<h2 id="add-heading">Add a user</h2>
${formToken(me)}
<div class="row">
<div><label for="member-email">Email</label><input id="member-email" name="email" type="email" required autocomplete="off" value="${view.form?.email ?? ""}"></div>
<div><label for="member-role">Role</label><select id="member-role" name="role">${roles.map(
      (role) => html`<option value="${role}"${(view.form?.role ?? "member") === role ? html` selected` : ""}>${role} (${ROLE_HINTS[role]})</option>`,
    )}</select></div>
<div><label for="member-password">Initial password</label><input id="member-password" name="password" type="password" required
minlength="${MIN_PASSWORD_LENGTH}" autocomplete="new-password" aria-describedby="member-password-hint"></div>
</div>
<p id="member-password-hint" class="muted small">At least ${MIN_PASSWORD_LENGTH} characters. Stored only as an argon2id hash.</p>
<button type="submit">Add user</button>
</form>`,
  );
}

/** What every row needs: who looks, the roles they may hand out, how many owners there are. */
interface RowContext {
  me: SignedIn;
  roles: Role[];
  owners: number;
}

function memberRow(member: MemberView, context: RowContext): Html {
  const { me } = context;
  return html`<tr data-user-id="${member.id}">
<td data-label="Email">${member.email}${member.id === me.user.id ? html` <span class="muted">(you)</span>` : ""}</td><td data-label="Role"><span class="badge">${member.role}</span></td>
<td data-label="Added">${when(member.createdAt)}</td><td data-label="Sign-in">${member.canSignIn ? "password" : html`<span class="muted">none (keys only)</span>`}</td>
<td class="actions">${memberActions(member, context)}</td>
</tr>`;
}

function memberActions(member: MemberView, { me, roles, owners }: RowContext): Html {
  // The store refuses it anyway; the page does not offer it.
  if (member.role === "owner" && owners === 1) {
    return html`<span class="muted small">The last owner: make someone else an owner to change or remove them.</span>`;
  }
  const changeable = roles.filter((role) => role !== member.role && mayChangeMember(me.user.role, member.role, role));
  return html`${
    changeable.length > 0
      ? html`<form method="post" action="/settings/members/${member.id}/role">${formToken(me)}
<label class="visually-hidden" for="role-${member.id}">New role for ${member.email}</label>
<select id="role-${member.id}" name="role">${changeable.map((role) => html`<option value="${role}">${role}</option>`)}</select>
<button type="submit" class="secondary">Change role<span class="visually-hidden"> of ${member.email}</span></button></form>`
      : ""
  }
${mayChangeMember(me.user.role, member.role, null) ? html`<a href="/settings/members/${member.id}/remove">Remove<span class="visually-hidden"> ${member.email}</span></a>` : ""}`;
}

export function removeMemberPage(me: SignedIn, member: MemberView): Html {
  return page(
    { title: "Remove user", me, tab: "members" },
    html`<h1>Remove ${member.email}?</h1>
<section class="card">
<p>${member.email} (${member.role}) will no longer be able to sign in, and <strong>every API key they created is revoked at once</strong>.
This cannot be undone.</p>
<form method="post" action="/settings/members/${member.id}/remove">${formToken(me)}
<button type="submit" class="danger">Remove user</button> <a class="button secondary" href="/settings/members">Cancel</a></form>
</section>`,
  );
}
