// Page-level notifications (Cloudscape Flashbar), pushed by any page.
import type { FlashbarProps } from "@cloudscape-design/components/flashbar";
import { createContext, useCallback, useContext, useMemo, useState, type ReactNode } from "react";

type Message = Omit<FlashbarProps.MessageDefinition, "id" | "onDismiss" | "dismissible">;

interface FlashApi {
  items: FlashbarProps.MessageDefinition[];
  push: (message: Message) => void;
}

const FlashContext = createContext<FlashApi>({ items: [], push: () => {} });
let nextId = 0;

export function FlashProvider({ children }: { children: ReactNode }) {
  const [items, setItems] = useState<FlashbarProps.MessageDefinition[]>([]);
  const push = useCallback((message: Message) => {
    const id = `flash-${nextId++}`;
    const dismiss = () => setItems((all) => all.filter((i) => i.id !== id));
    setItems((all) => [...all, { ...message, id, dismissible: true, onDismiss: dismiss }]);
  }, []);
  const value = useMemo(() => ({ items, push }), [items, push]);
  return <FlashContext.Provider value={value}>{children}</FlashContext.Provider>;
}

export function useFlash(): FlashApi {
  return useContext(FlashContext);
}
