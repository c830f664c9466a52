/** The Members tab: GET/POST /settings/members, POST …/:id/role, GET/POST …/:id/remove. */
import type { Core } from "../../../core/app/mod.ts";
import { mayChangeMember, type SignedIn } from "../../../core/accounts/mod.ts";
import { CertkeeperError } from "../../../core/base/mod.ts";
import { change, errorPage, noticeOf, signedIn, type WebRoute } from "../guard.ts";
import { redirect } from "../http.ts";
import { htmlResponse } from "../layout.ts";
import { membersPage, removeMemberPage } from "../views/members.ts";
import { refusedAt } from "../refused.ts";

export function memberRoutes(core: Core): WebRoute[] {
  const { members } = core.accounts;

  /**
   * The tab again with a refusal the user can act on (a bad field, the last owner), keeping their input;
   * a refusal of the add form (`form` given) marks the field it is about.
   */
  async function withError(me: SignedIn, error: unknown, form?: { email?: string; role?: string }): Promise<Response> {
    if (!(error instanceof CertkeeperError) || error.code !== "invalid_request") throw error;
    const field = form ? addFieldOf(error.message) : undefined;
    return htmlResponse(refusedAt(membersPage({ me, members: await members.list(me.user), error: error.message, form }), field, "add-member"), { status: 400 });
  }

  return [
    {
      method: "GET",
      path: "/settings/members",
      handle: signedIn(core, async ({ request }, me) =>
        htmlResponse(membersPage({ me, members: await members.list(me.user), notice: noticeOf(request) })),
      ),
    },
    {
      method: "POST",
      path: "/settings/members",
      handle: change(core, async (_input, me, form) => {
        try {
          await members.add(me.user, { email: form.email ?? "", role: form.role ?? "", password: form.password ?? "" });
        } catch (error) {
          return withError(me, error, { email: form.email, role: form.role });
        }
        return redirect("/settings/members?notice=member-added");
      }),
    },
    {
      method: "POST",
      path: "/settings/members/:id/role",
      handle: change(core, async ({ params }, me, form) => {
        try {
          await members.changeRole(me.user, { userId: params.id!, role: form.role ?? "" });
        } catch (error) {
          return withError(me, error);
        }
        return redirect("/settings/members?notice=role-changed");
      }),
    },
    {
      method: "GET",
      path: "/settings/members/:id/remove",
      handle: signedIn(core, async ({ params }, me) => {
        const member = await members.get(me.user, params.id!);
        // Refused before the confirmation, as the removal itself is (and as revoking an owner's key is).
        if (!mayChangeMember(me.user.role, member.role, null)) return errorPage(me, { status: 403, title: "Not allowed", message: "Only owners may remove an owner." });
        return htmlResponse(removeMemberPage(me, member));
      }),
    },
    {
      method: "POST",
      path: "/settings/members/:id/remove",
      handle: change(core, async ({ params }, me) => {
        try {
          await members.remove(me.user, params.id!);
        } catch (error) {
          return withError(me, error);
        }
        // Removing oneself ends one's own session too.
        return params.id === me.user.id ? redirect("/sign-in?notice=signed-out") : redirect("/settings/members?notice=member-removed");
      }),
    },
  ];
}

/**
 * The add form's field a refusal of it is about, by the refusal's own words around what it quotes (what
 * was typed is quoted as JSON, so it cannot pass for them): the address, the role or the password.
 */
function addFieldOf(message: string): string | undefined {
  if (/^".*" is not an email address\.$/.test(message) || /^A user with email ".*" already exists\.$/.test(message)) return "email";
  if (message.startsWith("Role ")) return "role";
  if (message.startsWith("A password must have ")) return "password";
  return undefined;
}
