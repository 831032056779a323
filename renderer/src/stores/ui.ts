import { create } from 'zustand';

export type Tab = 'control' | 'reservations' | 'history' | 'notebook' | 'data' | 'settings';

interface UiState {
  tab: Tab;
  /** On-screen keypads for PIN and number fields (touch screens); kept per station. */
  keypad: boolean;
  setTab: (tab: Tab) => void;
  toggleKeypad: () => void;
}

/**
 * In localStorage, kept per origin. The desktop window's origin is app://labstation; earlier
 * versions loaded the page from a local file, another origin, so after the upgrade a station
 * that had the keypad off shows it once more until it is turned off again.
 */
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
      // Storage may be unavailable (blocked, or full); the choice then lasts this run.
    }
    set({ keypad });
  },
}));
