// Send one prompt to the endpoint through podplane (the API server's Service proxy) and show
// the engine's answer with its token usage. It spends GPU time: operator role.
import Box from "@cloudscape-design/components/box";
import Button from "@cloudscape-design/components/button";
import Checkbox from "@cloudscape-design/components/checkbox";
import Container from "@cloudscape-design/components/container";
import FormField from "@cloudscape-design/components/form-field";
import Header from "@cloudscape-design/components/header";
import SpaceBetween from "@cloudscape-design/components/space-between";
import Textarea from "@cloudscape-design/components/textarea";
import { useState } from "react";
import { api, unwrap } from "../../api/client";
import { ProblemAlert } from "../../components/ProblemAlert";
import { answerText, answerTokens, type Invoked } from "./model";

export function InvokeBox({ cluster, name, denied }: { cluster: string; name: string; denied?: string }) {
  const [prompt, setPrompt] = useState("");
  const [chat, setChat] = useState(false);
  const [busy, setBusy] = useState(false);
  const [answer, setAnswer] = useState<Invoked | null>(null);
  const [error, setError] = useState<unknown>(null);
  const send = async () => {
    setBusy(true);
    setError(null);
    try {
      setAnswer(
        await unwrap(
          api.POST("/api/v1/clusters/{cluster}/endpoints/{name}/invoke", {
            params: { path: { cluster, name } },
            body: { prompt, chat },
          }),
        ),
      );
    } catch (err) {
      setError(err);
    }
    setBusy(false);
  };
  const tokens = answer ? answerTokens(answer) : {};
  return (
    <Container header={<Header variant="h2" description="One OpenAI-compatible request through the Kubernetes API server's Service proxy.">Try it</Header>}>
      <SpaceBetween size="s">
        <FormField label="Prompt">
          <Textarea ariaLabel="Prompt" value={prompt} rows={3} onChange={(e) => setPrompt(e.detail.value)} />
        </FormField>
        <SpaceBetween direction="horizontal" size="m" alignItems="center">
          <Button variant="primary" loading={busy} disabled={Boolean(denied) || !prompt.trim()} disabledReason={denied} onClick={() => void send()}>
            Send
          </Button>
          <Checkbox checked={chat} onChange={(e) => setChat(e.detail.checked)}>
            Chat (/v1/chat/completions)
          </Checkbox>
        </SpaceBetween>
        {error !== null && <ProblemAlert error={error} header="The endpoint did not answer" />}
        {answer && (
          <Box>
            <Box variant="awsui-key-label">Answer ({answer.path})</Box>
            <div data-testid="invoke-answer">{answerText(answer)}</div>
            <Box variant="small" color="text-body-secondary">
              {tokens.prompt ?? "-"} prompt + {tokens.completion ?? "-"} completion tokens
            </Box>
          </Box>
        )}
      </SpaceBetween>
    </Container>
  );
}
