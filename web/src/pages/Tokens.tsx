// Tokens for people, scripts and agents (admin only): list, create, revoke.
import Alert from "@cloudscape-design/components/alert";
import Box from "@cloudscape-design/components/box";
import Button from "@cloudscape-design/components/button";
import CopyToClipboard from "@cloudscape-design/components/copy-to-clipboard";
import Header from "@cloudscape-design/components/header";
import SpaceBetween from "@cloudscape-design/components/space-between";
import Table, { type TableProps } from "@cloudscape-design/components/table";
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { api, unwrap, type Schemas } from "../api/client";
import { ProblemAlert } from "../components/ProblemAlert";
import { Status } from "../components/Status";
import { Time } from "../components/Time";
import { CreateTokenModal, RevokeTokenModal } from "./TokenModals";
import { useFlash } from "../layout/flash";
import { allows, deniedReason } from "../permissions";
import { markSignedOut, usePrincipal } from "../session";

type Token = Schemas["TokenOut"];
type Created = Schemas["TokenCreated"];

export default function Tokens() {
  const who = usePrincipal();
  if (!allows(who.role, "token.list")) {
    return (
      <SpaceBetween size="m">
        <Header variant="h1">Tokens</Header>
        <Alert type="info" header="Tokens are managed by admins">
          {deniedReason(who.role, "token.list")} Ask an admin for a new token or to revoke one.
        </Alert>
      </SpaceBetween>
    );
  }
  return <TokenTable />;
}

function TokenTable() {
  const who = usePrincipal();
  const client = useQueryClient();
  const flash = useFlash();
  const [selected, setSelected] = useState<Token[]>([]);
  const [creating, setCreating] = useState(false);
  const [revoking, setRevoking] = useState<Token | null>(null);
  const [created, setCreated] = useState<Created | null>(null);
  const query = useQuery({ queryKey: ["tokens"], queryFn: () => unwrap(api.GET("/api/v1/tokens")) });

  const changed = () => {
    void client.invalidateQueries({ queryKey: ["tokens"] });
    void client.invalidateQueries({ queryKey: ["audit"] });
  };
  const onCreated = (token: Created) => {
    setCreating(false);
    setCreated(token);
    changed();
  };
  const onRevoked = (token: Token) => {
    setRevoking(null);
    setSelected([]);
    if (token.name === who.name) {
      markSignedOut(client);
      return;
    }
    flash.push({ type: "success", content: `Token ${token.name} revoked.` });
    changed();
  };
  const target = selected[0];

  return (
    <SpaceBetween size="m">
      {created && <NewSecret token={created} onDismiss={() => setCreated(null)} />}
      {query.isError && <ProblemAlert error={query.error} header="Could not list tokens" />}
      <Table
        variant="full-page"
        items={query.data ?? []}
        trackBy="id"
        loading={query.isPending}
        loadingText="Loading tokens"
        selectionType="single"
        selectedItems={selected}
        onSelectionChange={(e) => setSelected(e.detail.selectedItems)}
        isItemDisabled={(t) => t.revoked}
        columnDefinitions={columns}
        ariaLabels={{
          selectionGroupLabel: "Token selection",
          itemSelectionLabel: (_, t) => `Select token ${t.name}`,
          allItemsSelectionLabel: () => "Select all",
        }}
        header={
          <Header
            variant="awsui-h1-sticky"
            counter={query.data ? `(${query.data.filter((t) => !t.revoked).length} active)` : undefined}
            description="Each person, script and agent gets its own token and role. Secrets are stored hashed and shown once."
            actions={
              <SpaceBetween size="xs" direction="horizontal">
                <Button iconName="refresh" ariaLabel="Refresh" loading={query.isFetching} onClick={() => void query.refetch()} />
                <Button
                  disabled={!target || target.revoked || !allows(who.role, "token.revoke")}
                  disabledReason={deniedReason(who.role, "token.revoke") ?? "Select an active token first."}
                  onClick={() => target && setRevoking(target)}
                >
                  Revoke
                </Button>
                <Button
                  variant="primary"
                  disabled={!allows(who.role, "token.create")}
                  disabledReason={deniedReason(who.role, "token.create")}
                  onClick={() => setCreating(true)}
                >
                  Create token
                </Button>
              </SpaceBetween>
            }
          >
            Tokens
          </Header>
        }
        empty={<Box textAlign="center" padding="l">No tokens.</Box>}
      />
      {creating && <CreateTokenModal onClose={() => setCreating(false)} onCreated={onCreated} />}
      {revoking && (
        <RevokeTokenModal
          token={revoking}
          isSelf={revoking.name === who.name}
          onClose={() => setRevoking(null)}
          onRevoked={onRevoked}
        />
      )}
    </SpaceBetween>
  );
}

function NewSecret({ token, onDismiss }: { token: Created; onDismiss: () => void }) {
  return (
    <Alert type="success" dismissible onDismiss={onDismiss} header={`Token ${token.name} created (${token.role})`}>
      <SpaceBetween size="xs">
        <span>Copy the secret now: it is stored hashed and is not shown again.</span>
        <CopyToClipboard
          variant="inline"
          data-testid="new-token-secret"
          textToCopy={token.token}
          copyButtonAriaLabel="Copy the token"
          copySuccessText="Token copied"
          copyErrorText="Copy failed; select the text instead"
        />
      </SpaceBetween>
    </Alert>
  );
}

const columns: TableProps.ColumnDefinition<Token>[] = [
  { id: "name", header: "Name", cell: (t) => t.name, isRowHeader: true },
  { id: "role", header: "Role", cell: (t) => t.role },
  { id: "status", header: "Status", cell: (t) => <Status value={t.revoked ? "revoked" : "active"} /> },
  { id: "created", header: "Created", cell: (t) => <Time value={t.created_at} /> },
  { id: "used", header: "Last used", cell: (t) => <Time value={t.last_used_at} /> },
];
