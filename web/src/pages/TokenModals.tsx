import Alert from "@cloudscape-design/components/alert";
import Box from "@cloudscape-design/components/box";
import Button from "@cloudscape-design/components/button";
import FormField from "@cloudscape-design/components/form-field";
import Input from "@cloudscape-design/components/input";
import Modal from "@cloudscape-design/components/modal";
import Select, { type SelectProps } from "@cloudscape-design/components/select";
import SpaceBetween from "@cloudscape-design/components/space-between";
import { useState, type FormEvent } from "react";
import { api, unwrap, type Schemas } from "../api/client";
import { ProblemAlert } from "../components/ProblemAlert";

type Token = Schemas["TokenOut"];
type Created = Schemas["TokenCreated"];
type Role = Schemas["Role"];

const ROLE_OPTIONS: SelectProps.Option[] = [
  { value: "viewer", label: "viewer", description: "Reads everything; changes nothing." },
  { value: "operator", label: "operator", description: "Creates and changes clusters, groups, jobs." },
  { value: "admin", label: "admin", description: "Also deletes, and manages tokens." },
];

export function CreateTokenModal({ onClose, onCreated }: { onClose: () => void; onCreated: (t: Created) => void }) {
  const [name, setName] = useState("");
  const [role, setRole] = useState<SelectProps.Option>(ROLE_OPTIONS[0]);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const submit = async (event?: FormEvent) => {
    event?.preventDefault();
    setBusy(true);
    setError(null);
    try {
      onCreated(await unwrap(api.POST("/api/v1/tokens", { body: { name: name.trim(), role: role.value as Role } })));
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };

  return (
    <Modal
      visible
      onDismiss={onClose}
      header="Create token"
      footer={
        <Box float="right">
          <SpaceBetween direction="horizontal" size="xs">
            <Button variant="link" onClick={onClose}>Cancel</Button>
            <Button variant="primary" loading={busy} disabled={!name.trim()} onClick={() => void submit()}>
              Create token
            </Button>
          </SpaceBetween>
        </Box>
      }
    >
      <form onSubmit={(e) => void submit(e)}>
        <SpaceBetween size="m">
          <FormField label="Name" description="Who or what holds it: a person, a CI job, an agent." constraintText="1-63 lowercase letters, digits, '.', '_' or '-'.">
            <Input value={name} autoFocus ariaLabel="Token name" onChange={(e) => setName(e.detail.value)} />
          </FormField>
          <FormField label="Role">
            <Select selectedOption={role} options={ROLE_OPTIONS} ariaLabel="Token role" onChange={(e) => setRole(e.detail.selectedOption)} />
          </FormField>
          {error !== null && <ProblemAlert error={error} header="The token was not created" />}
        </SpaceBetween>
      </form>
    </Modal>
  );
}

interface RevokeProps {
  token: Token;
  isSelf: boolean;
  onClose: () => void;
  onRevoked: (t: Token) => void;
}

export function RevokeTokenModal({ token, isSelf, onClose, onRevoked }: RevokeProps) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const revoke = async () => {
    setBusy(true);
    setError(null);
    try {
      await unwrap(api.DELETE("/api/v1/tokens/{name}", { params: { path: { name: token.name } } }));
      onRevoked(token);
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };

  return (
    <Modal
      visible
      onDismiss={onClose}
      header={`Revoke token ${token.name}?`}
      footer={
        <Box float="right">
          <SpaceBetween direction="horizontal" size="xs">
            <Button variant="link" onClick={onClose}>Cancel</Button>
            <Button variant="primary" loading={busy} onClick={() => void revoke()}>Revoke</Button>
          </SpaceBetween>
        </Box>
      }
    >
      <SpaceBetween size="m">
        <Box variant="p">
          Everything that uses <b>{token.name}</b> ({token.role}) loses access at once: scripts, agents and
          console sessions opened with it. A revoked token cannot be restored; create a new one instead.
        </Box>
        {isSelf && (
          <Alert type="warning">You are signed in with this token: revoking it signs you out.</Alert>
        )}
        {error !== null && <ProblemAlert error={error} header="The token was not revoked" />}
      </SpaceBetween>
    </Modal>
  );
}
