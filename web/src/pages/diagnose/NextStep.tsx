// The suggested next step. A read-only one is shown as the call to make; a mutation the console
// can make is a button (disabled with the reason for a role that may not) that asks for a
// confirmation (ConfirmStep) before anything is sent; once started, the operation is followed.
import Alert from "@cloudscape-design/components/alert";
import Box from "@cloudscape-design/components/box";
import Button from "@cloudscape-design/components/button";
import Container from "@cloudscape-design/components/container";
import Header from "@cloudscape-design/components/header";
import SpaceBetween from "@cloudscape-design/components/space-between";
import { deniedReason } from "../../permissions";
import { usePrincipal } from "../../session";
import { callText, performable, type Performable } from "./actions";
import { StartedOperation } from "./ConfirmStep";
import type { SuggestedCall } from "./model";

export interface NextStepProps {
  call: SuggestedCall;
  /** Asks the person to confirm the action; absent, the step is shown without a button. */
  onAct?: (action: Performable, call: SuggestedCall) => void;
  /** The operation the confirmed step started. */
  started?: string | null;
}

export function NextStep({ call, onAct, started }: NextStepProps) {
  const role = usePrincipal().role;
  const action = call.mutates ? performable(call) : null;
  const denied = action ? deniedReason(role, action.permission) : undefined;
  return (
    <Container header={<Header variant="h3" description="Suggested by the diagnosis, which makes no call itself.">Suggested next step</Header>}>
      <SpaceBetween size="s">
        <Box variant="code" data-testid="next-call">{callText(call)}</Box>
        <Box variant="p"><b>Cost:</b> {call.cost}</Box>
        {call.mutates && !action && <Alert type="info">Make this change with the API, MCP or CLI, after confirming it.</Alert>}
        {action && onAct && !started && (
          <Button variant="primary" disabled={Boolean(denied)} disabledReason={denied} onClick={() => onAct(action, call)}>
            {action.verb}
          </Button>
        )}
        {started && <StartedOperation id={started} />}
      </SpaceBetween>
    </Container>
  );
}
