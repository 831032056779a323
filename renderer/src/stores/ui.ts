import { create } from 'zustand';

export type Tab = 'control' | 'reservations' | 'history' | 'notebook' | 'data' | 'settings';

interface UiState {
  tab: Tab;
  /** On-screen keypads for PIN and number fields (touch screens); kept per station. */
  keypad: boolean;
  setTab: (tab: Tab) => void;
  toggleKeypad: () => void;
}

const KEYPAD_KEY = 'labstation.keypad';

function storedKeypad(): boolean {
  try {
    return localStorage.getItem(KEYPAD_KEY) !== 'off';
  } catch {
    return true;
  }
}

export const useUiStore = create<UiState>()((set, get) => ({
  tab: 'control',
  keypad: storedKeypad(),
  setTab(tab) {
    set({ tab });
  },
  toggleKeypad() {
    const keypad = !get().keypad;
    try {
      localStorage.setItem(KEYPAD_KEY, keypad ? 'on' : 'off');
    } catch {
      // Storage may be unavailable (file:// in some shells); the choice then lasts this run.
    }
    set({ keypad });
  },
}));
