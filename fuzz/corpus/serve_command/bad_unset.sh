A=aaaaaaaaaaaaaaaa
vllm serve m $A$A$A$A$A$A$A$A --max-model-len $UNSET
