// The frame around every page: top navigation (principal, role, sign out), side navigation,
// breadcrumbs and notifications.
import AppLayout from "@cloudscape-design/components/app-layout";
import BreadcrumbGroup from "@cloudscape-design/components/breadcrumb-group";
import Flashbar from "@cloudscape-design/components/flashbar";
import Badge from "@cloudscape-design/components/badge";
import SideNavigation, { type SideNavigationProps } from "@cloudscape-design/components/side-navigation";
import TopNavigation from "@cloudscape-design/components/top-navigation";
import { useState, type ReactNode } from "react";
import { problemOf } from "../api/problem";
import { followHandler } from "../router";
import type { RouteDef } from "../routes";
import { allows, NEEDS } from "../permissions";
import { NAV, NAV_NEEDS } from "../routes";
import { usePrincipal, useSignOut } from "../session";
import { useFlash } from "./flash";

interface ShellProps {
  route: RouteDef | undefined;
  params: Record<string, string>;
  activeHref: string;
  children: ReactNode;
}

export function Shell({ route, params, activeHref, children }: ShellProps) {
  const flash = useFlash();
  const who = usePrincipal();
  // Below 1280px the tables need the width more than the navigation does; the toggle opens it.
  const [navOpen, setNavOpen] = useState(() => window.innerWidth >= 1280);
  const crumbs = [{ text: "podplane", href: "/" }, ...(route ? route.crumbs(params) : [])];
  return (
    <>
      <TopBar />
      <AppLayout
        headerSelector="#pp-top"
        navigationOpen={navOpen}
        onNavigationChange={(e) => setNavOpen(e.detail.open)}
        navigation={
          <SideNavigation
            header={{ text: "podplane", href: "/" }}
            activeHref={activeHref}
            items={withRoleHints(NAV, who.role)}
            onFollow={followHandler}
          />
        }
        breadcrumbs={<BreadcrumbGroup items={crumbs} onFollow={followHandler} ariaLabel="Breadcrumbs" />}
        notifications={<Flashbar items={flash.items} stackItems />}
        contentType={route?.contentType ?? "default"}
        toolsHide
        content={children}
        ariaLabels={{ navigation: "Side navigation", navigationClose: "Close navigation", navigationToggle: "Open navigation" }}
      />
    </>
  );
}

function withRoleHints(items: readonly SideNavigationProps.Item[], role: string): SideNavigationProps.Item[] {
  return items.map((item) => {
    if (item.type === "section") return { ...item, items: withRoleHints(item.items, role) };
    if (item.type !== "link") return item;
    const needs = NAV_NEEDS[item.href];
    if (!needs || allows(role, needs)) return item;
    return { ...item, info: <Badge>{NEEDS[needs]}</Badge> };
  });
}

function TopBar() {
  const who = usePrincipal();
  const signOut = useSignOut();
  const flash = useFlash();
  const onMenu = async (id: string) => {
    if (id !== "signout") return;
    try {
      await signOut(); // the sign-in page replaces this one at the same URL
    } catch (err) {
      flash.push({ type: "error", header: "Sign-out failed", content: problemOf(err).detail });
    }
  };
  return (
    <div id="pp-top" style={{ position: "sticky", top: 0, zIndex: 1002 }}>
      <TopNavigation
        identity={{ href: "/", title: "podplane", onFollow: followHandler }}
        utilities={[
          {
            type: "menu-dropdown",
            text: `${who.name} · ${who.role}`,
            description: `Signed in as ${who.name} (role: ${who.role})`,
            iconName: "user-profile",
            items: [{ id: "signout", text: "Sign out" }],
            onItemClick: (e) => void onMenu(e.detail.id),
          },
        ]}
      />
    </div>
  );
}
