/* placeholder */
typedef int tdm_md2_placeholder;
