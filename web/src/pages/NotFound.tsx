import Box from "@cloudscape-design/components/box";
import Button from "@cloudscape-design/components/button";
import { navigate } from "../router";
import { HOME } from "../routes";

export function NotFound() {
  return (
    <Box textAlign="center" padding="xxl">
      <Box variant="h1">Page not found</Box>
      <Box variant="p" color="text-body-secondary" padding={{ bottom: "m" }}>
        There is no console page at {location.pathname}.
      </Box>
      <Button onClick={() => navigate(HOME)}>Go to the console home</Button>
    </Box>
  );
}
