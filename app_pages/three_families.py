"""Three families of solutions: a side-by-side comparison with computed numbers, and a chooser."""

import streamlit as st

from app_pages.ui import caching, frame
from poslab.lessons import get_lesson
from poslab.viz import families

LESSON = "three-families"
MAX_LENS = [2**power for power in range(7, 21)]  # 128 .. 1,048,576 tokens

frame.lesson_header(LESSON)
frame.text(LESSON, "intro")
frame.text(LESSON, "settings")

preset = st.pills("Start from", list(families.PRESETS), default="GPT-2 small", key="tf-preset") or "GPT-2 small"
start_width, start_len, start_heads = families.PRESETS[preset]
width_box, length_box, heads_box = st.columns(3)
d_model = width_box.number_input("Model width D (features)", 8, 32768, start_width, step=8, key=f"tf-d-{preset}")
max_len = length_box.select_slider(
    "Trained context max_len (tokens)", MAX_LENS, value=start_len, format_func="{:,}".format, key=f"tf-len-{preset}"
)
n_heads = heads_box.number_input("Attention heads H", 1, 256, start_heads, key=f"tf-h-{preset}")

try:
    table = caching.cached(families.comparison_table, d_model=int(d_model), max_len=max_len, n_heads=int(n_heads))
except ValueError as error:
    st.error(str(error), icon=":material/error:")
else:
    if frame.predict(LESSON, "learned-size", reveal_after=True):  # the table answers it
        # A static table wraps its cells, so every method's column and every sentence is read whole.
        st.table(table)
        frame.text(LESSON, "table-notes")
        frame.chart(families.budget_chart(int(d_model), max_len, int(n_heads)), numbers=True)
        frame.text(LESSON, "budget-notes")

frame.text(LESSON, "nope")
frame.text(LESSON, "chooser")
chosen = st.segmented_control(
    "Study next", families.METHOD_IDS, format_func=lambda i: families.get_method(i).name, key="tf-choice"
)
if chosen:
    method = families.get_method(chosen)
    st.markdown(f"**{method.name}** ({method.family}): {method.idea}. Used by {method.used_by}.")
    if st.button(
        f"Open the {get_lesson(chosen).title} lesson", type="primary", icon=":material/arrow_forward:", key="tf-go"
    ):
        st.switch_page(get_lesson(chosen).page_path)

frame.lesson_footer(LESSON)
