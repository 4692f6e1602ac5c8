// Sign-in: a token is exchanged for an HttpOnly session cookie; the token never stays in the page.
import Box from "@cloudscape-design/components/box";
import Button from "@cloudscape-design/components/button";
import Container from "@cloudscape-design/components/container";
import Form from "@cloudscape-design/components/form";
import FormField from "@cloudscape-design/components/form-field";
import Header from "@cloudscape-design/components/header";
import Input from "@cloudscape-design/components/input";
import SpaceBetween from "@cloudscape-design/components/space-between";
import TopNavigation from "@cloudscape-design/components/top-navigation";
import { useState, type FormEvent } from "react";
import { ProblemAlert } from "../components/ProblemAlert";
import { useSignIn } from "../session";

export default function SignIn() {
  const signIn = useSignIn();
  const [token, setToken] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!token.trim()) return;
    setBusy(true);
    setError(null);
    try {
      await signIn(token.trim());
    } catch (err) {
      setError(err);
      setBusy(false);
    }
  };

  return (
    <>
      <TopNavigation identity={{ href: "/", title: "podplane" }} />
      <Box padding={{ top: "xxxl", horizontal: "l" }}>
        <div style={{ maxWidth: 520, margin: "0 auto" }}>
          <form onSubmit={submit}>
            <Form
              actions={
                <Button variant="primary" formAction="submit" loading={busy} disabled={!token.trim()}>
                  Sign in
                </Button>
              }
            >
              <Container
                header={
                  <Header
                    variant="h1"
                    description="The control plane for your GPU clusters on Amazon EKS and SageMaker HyperPod."
                  >
                    Sign in
                  </Header>
                }
              >
                <SpaceBetween size="l">
                  <FormField
                    label="API token"
                    description="The token you were given. `podplane up` prints the admin token on first start."
                    constraintText="Tokens are created with: podplane token create --name NAME --role viewer|operator|admin"
                  >
                    <Input
                      type="password"
                      value={token}
                      autoFocus
                      placeholder="pp_..."
                      ariaLabel="API token"
                      onChange={(e) => setToken(e.detail.value)}
                    />
                  </FormField>
                  {error !== null && <ProblemAlert error={error} header="Sign-in failed" />}
                </SpaceBetween>
              </Container>
            </Form>
          </form>
        </div>
      </Box>
    </>
  );
}
