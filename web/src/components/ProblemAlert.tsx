import Alert from "@cloudscape-design/components/alert";
import Box from "@cloudscape-design/components/box";
import { problemOf } from "../api/problem";

/** An API error as the server described it: its message, its stable code and its hint. */
export function ProblemAlert({ error, header }: { error: unknown; header?: string }) {
  const p = problemOf(error);
  return (
    <Alert type="error" header={header ?? p.title}>
      {p.detail}
      {p.hint && (
        <Box variant="p" color="text-body-secondary">
          Hint: {p.hint}
        </Box>
      )}
      <Box variant="small" display="block" color="text-status-inactive">
        code: {p.code}
      </Box>
    </Alert>
  );
}
