// Keeps a failing page (or a page chunk that no longer exists after an upgrade) from
// blanking the whole console.
import Alert from "@cloudscape-design/components/alert";
import Button from "@cloudscape-design/components/button";
import { Component, type ReactNode } from "react";

interface State {
  error: Error | null;
}

export class ErrorBoundary extends Component<{ children: ReactNode }, State> {
  state: State = { error: null };

  static getDerivedStateFromError(error: Error): State {
    return { error };
  }

  render() {
    if (!this.state.error) return this.props.children;
    return (
      <Alert
        type="error"
        header="This page failed to load"
        action={<Button onClick={() => location.reload()}>Reload</Button>}
      >
        {this.state.error.message}. If the control plane was just upgraded, reloading fetches the new console.
      </Alert>
    );
  }
}
